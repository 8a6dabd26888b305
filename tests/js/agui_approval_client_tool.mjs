// One step that needs both a person's approval (send_email) and a frontend
// tool (pick_color), through the real @ag-ui/client: the first run finishes
// with the approval's interrupt, the frontend call streamed without a result
// (named in result.pending_tool_call_ids); the frontend runs its tool and the
// second run carries both answers: the resume entry and the tool message.
// Usage: node agui_approval_client_tool.mjs URL THREAD
import { HttpAgent } from "@ag-ui/client";

const [url, threadId] = process.argv.slice(2);
const tools = [{
  name: "pick_color",
  description: "Ask the user to pick a color.",
  parameters: { type: "object", properties: { hint: { type: "string" } }, required: ["hint"] },
}];
const agent = new HttpAgent({ url, threadId });
agent.messages = [{ id: "u1", role: "user", content: "Mail Ada the banner color" }];
const runs = [];
let events = [];
const subscriber = {
  onEvent({ event }) { events.push(event.type); },
  onRunFinishedEvent({ event, pendingToolCallIds }) {
    runs.push({ events, result: event.result ?? null, outcome: event.outcome ?? null,
                pendingToolCallIds: pendingToolCallIds ?? null });
    events = [];
  },
};
let error = null;
let derived = null;
try {
  await agent.runAgent({ runId: "run-1", tools }, subscriber);
  const interrupts = runs[0].outcome.interrupts;
  // what the stream says is unanswered: calls without a tool message, bound to no interrupt
  const answered = new Set(agent.messages.filter((m) => m.role === "tool").map((m) => m.toolCallId));
  const gated = new Set(interrupts.map((i) => i.toolCallId));
  derived = agent.messages.flatMap((m) => m.toolCalls ?? [])
    .filter((c) => !answered.has(c.id) && !gated.has(c.id)).map((c) => c.id);
  for (const id of runs[0].result.pending_tool_call_ids) {  // the frontend runs its tool
    const call = agent.messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.id === id);
    const hint = JSON.parse(call.function.arguments).hint;
    agent.messages.push({ id: `t-${id}`, role: "tool", toolCallId: id, content: JSON.stringify({ color: "teal", hint }) });
  }
  await agent.runAgent({
    runId: "run-2", tools,
    resume: interrupts.map((i) => ({ interruptId: i.id, status: "resolved", payload: { approved: true } })),
  }, subscriber);
} catch (exc) {
  error = String(exc);
}
console.log(JSON.stringify({ runs, error, derived, messages: agent.messages }));
