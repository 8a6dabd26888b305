// An approval through AG-UI interrupts, with the real @ag-ui/client: the
// first run finishes with an interrupt for the tool call; the second run
// resumes it (approved with an edited input, or refused).
// Usage: node agui_approval.mjs URL APPROVED(true|false)
import { HttpAgent } from "@ag-ui/client";

const [url, approved] = process.argv.slice(2);
const agent = new HttpAgent({ url, threadId: `thread-approval-${approved}` });
agent.messages = [{ id: "u1", role: "user", content: "Mail Ada" }];
const finished = [];
const events = [];
const subscriber = {
  onEvent({ event }) { events.push(event.type); },
  onRunFinishedEvent({ event }) { finished.push({ outcome: event.outcome ?? null, result: event.result ?? null }); },
};
let error = null;
try {
  await agent.runAgent({ runId: "run-1" }, subscriber);
  const interrupt = finished[0].outcome.interrupts[0];
  const payload = approved === "true"
    ? { approved: true, input: { to: "ada@x.org", body: "edited" } }
    : { approved: false, reason: "not now" };
  await agent.runAgent(
    { runId: "run-2", resume: [{ interruptId: interrupt.id, status: "resolved", payload }] },
    subscriber,
  );
} catch (exc) {
  error = String(exc);
}
console.log(JSON.stringify({ finished, events, error, messages: agent.messages }));
