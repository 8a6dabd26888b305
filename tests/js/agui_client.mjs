// Runs an AG-UI agent with the real @ag-ui/client HttpAgent against a server
// the Python test started; prints what the client made of the stream as JSON.
// Usage: node agui_client.mjs URL
import { HttpAgent } from "@ag-ui/client";

const [url] = process.argv.slice(2);
const agent = new HttpAgent({ url, threadId: "thread-1", initialState: { theme: "dark" } });
agent.messages = [
  { id: "u0", role: "user", content: "earlier question" },
  { id: "a0", role: "assistant", content: "earlier answer" },
  { id: "u1", role: "user", content: "Find Ada's contact" },
];
const events = [];
const states = [];
let error = null;
let result = null;
try {
  result = await agent.runAgent(
    {
      runId: "run-1",
      tools: [{ name: "confirm", description: "ask the user", parameters: { type: "object" } }],
    },
    {
      onEvent({ event }) { events.push(event.type); },
      onStateChanged({ state }) { states.push(structuredClone(state)); },
      onRunErrorEvent({ event }) { error = { message: event.message, code: event.code }; },
    },
  );
} catch (exc) {
  error = error ?? { message: String(exc) };
}
console.log(JSON.stringify({
  events, states, error, result: result && result.result,
  messages: agent.messages, state: agent.state,
}));
