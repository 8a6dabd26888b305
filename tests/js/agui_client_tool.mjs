// A frontend tool through the real @ag-ui/client (what CopilotKit's
// useFrontendTool runs on): the run declares `pick_color` in
// RunAgentInput.tools; the first run streams the model's call of it
// (TOOL_CALL_START/ARGS/END) and finishes; the frontend runs the tool, adds
// the `tool` message with the result and starts the next run, whose model
// continues with it.
// Usage: node agui_client_tool.mjs URL THREAD
import { HttpAgent } from "@ag-ui/client";

const [url, threadId] = process.argv.slice(2);
const tools = [{
  name: "pick_color",
  description: "Ask the user to pick a color.",
  parameters: { type: "object", properties: { hint: { type: "string" } }, required: ["hint"] },
}];
const agent = new HttpAgent({ url, threadId });
agent.messages = [{ id: "u1", role: "user", content: "Pick a color for the banner" }];
const runs = [];
let events = [];
const subscriber = {
  onEvent({ event }) { events.push(event.type); },
  onRunFinishedEvent({ event, pendingToolCallIds }) {
    runs.push({ events, result: event.result ?? null, outcome: event.outcome ?? null, pendingToolCallIds: pendingToolCallIds ?? null });
    events = [];
  },
};
let error = null;
let asked = null;
try {
  await agent.runAgent({ runId: "run-1", tools }, subscriber);
  const [pending] = runs[0].pendingToolCallIds;  // what the client says it must answer
  asked = agent.messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.id === pending);
  const hint = JSON.parse(asked.function.arguments).hint;  // the frontend runs its tool
  agent.messages.push({ id: "t1", role: "tool", toolCallId: asked.id, content: JSON.stringify({ color: "teal", hint }) });
  await agent.runAgent({ runId: "run-2", tools }, subscriber);
} catch (exc) {
  error = String(exc);
}
const firstRun = agent.messages.slice(0, 4);  // user, assistant (both calls), tool, tool
console.log(JSON.stringify({ runs, error, asked, firstRun, messages: agent.messages }));
