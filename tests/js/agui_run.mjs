// One AG-UI run with the real @ag-ui/client HttpAgent against a server the
// Python test started; with "abort", the client aborts the run
// (HttpAgent.abortRun, as a frontend's stop button does) once the first text
// arrives. Prints the events, the RUN_ERROR (if any), the outcome the client
// read of RUN_FINISHED (if any), what runAgent threw,
// the ids of the messages the client completed (onNewMessage), the run's
// result and the client's state (its snapshots and deltas applied) as JSON,
// with the state after each state event and the warnings the client logged
// (a STATE_DELTA it could not apply is only logged: "Failed to apply state patch").
// Usage: node agui_run.mjs URL [abort]
import { HttpAgent } from "@ag-ui/client";

const [url, mode] = process.argv.slice(2);
const agent = new HttpAgent({ url, threadId: "thread-run" });
agent.messages = [{ id: "u1", role: "user", content: "Find Ada's contact" }];
const events = [];
let runError = null;
let thrown = null;
let result = null;
let aborted = false;
let finished = null;   // how the client read RUN_FINISHED (onRunFinishedEvent): its outcome
const completed = [];  // the ids of the messages the client completed (onNewMessage)
const states = [];     // the client's state after each state event it applied
const warnings = [];
const warn = console.warn;
console.warn = (...args) => { warnings.push(args.map(String).join(" ")); warn(...args); };
agent.subscribe({
  onNewMessage({ message }) { completed.push(message.id); },
  onStateChanged({ state }) { states.push(structuredClone(state)); },
});
try {
  result = await agent.runAgent({ runId: "run-1" }, {
    onEvent({ event }) {
      events.push(event);
      if (mode === "abort" && !aborted && event.type === "TEXT_MESSAGE_CONTENT") {
        aborted = true;
        agent.abortRun();
      }
    },
    onRunFinishedEvent({ outcome }) { finished = { outcome }; },
    onRunErrorEvent({ event }) { runError = { message: event.message, code: event.code ?? null }; },
  });
} catch (exc) {
  thrown = String(exc);
}
console.log(JSON.stringify({ events, runError, thrown, aborted, finished, completed, result: result && result.result ? result.result : null, state: agent.state, states, warnings }));
