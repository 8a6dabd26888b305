// The real @ag-ui/client in a browser page (bundled by esbuild in the test).
import { HttpAgent } from "@ag-ui/client";

const agent = new HttpAgent({ url: "/agui", threadId: "thread-browser" });
agent.messages = [{ id: "u1", role: "user", content: "Find Ada's contact" }];
const events = [];
let error = null;
try {
  await agent.runAgent({ runId: "run-browser" }, { onEvent({ event }) { events.push(event.type); } });
} catch (exc) {
  error = String(exc);
}
window.agentflowResult = { events, error, messages: agent.messages, state: agent.state };
