// One call streamed on agentflow's own SSE wire (agentflow.web.sse), read as
// a browser page reads it (fetch, then the body through an SSE parser: the
// `eventsource-parser` package, the one the `ai` package reads SSE with),
// against a server the Python test started. Prints every event (its id, its
// `event` name and its parsed data) and what the read threw, as JSON.
// Usage: node sse_run.mjs URL
import { EventSourceParserStream } from "eventsource-parser/stream";

const [url] = process.argv.slice(2);
const events = [];
let thrown = null;
let status = null;
try {
  const response = await fetch(url, {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ text: "Find Ada's contact" }),
  });
  status = response.status;
  const reader = response.body.pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    events.push({ id: value.id ?? null, event: value.event ?? null, data: JSON.parse(value.data) });
  }
} catch (exc) {
  thrown = String(exc);
}
console.log(JSON.stringify({ status, events, thrown }));
