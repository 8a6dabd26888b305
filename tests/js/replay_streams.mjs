// Replays recorded SSE bodies through the real clients' stream checks (no
// server): AG-UI bodies through @ag-ui/core's EventSchema and
// @ag-ui/client's verifyEvents (the checks HttpAgent runs on every event),
// AI SDK bodies through the ai package's parseJsonEventStream with
// uiMessageChunkSchema and readUIMessageStream (what useChat's transport and
// chat run). Reads {"cases": [{"id", "protocol": "agui"|"ai", "body"}]} from
// stdin; prints {"results": [{"id", "error", "message", "state"}]} (error: the
// first error a client raised, or null; message: the UI message the AI SDK
// built; state: the AG-UI state its snapshots and deltas made, as the
// client's applyPatch makes it).
// Usage: node replay_streams.mjs < cases.json
import { verifyEvents } from "@ag-ui/client";
import jsonPatch from "fast-json-patch";
import { EventSchema } from "@ag-ui/core/schemas";
import { from, lastValueFrom, toArray } from "rxjs";
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema } from "ai";

function frames(body) {
  return body.split("\n\n").filter((f) => f.startsWith("data: ")).map((f) => f.slice(6));
}

async function agui(body) {
  const events = frames(body).map((data) => EventSchema.parse(JSON.parse(data)));
  await lastValueFrom(from(events).pipe(verifyEvents(false), toArray()));
  let state = null;
  for (const e of events) {
    if (e.type === "STATE_SNAPSHOT") state = e.snapshot;
    if (e.type === "STATE_DELTA") state = jsonPatch.applyPatch(state, e.delta, true, false).newDocument;
  }
  return state;
}

async function ai(body) {
  const bytes = new TextEncoder().encode(body);
  const stream = new ReadableStream({ start(c) { c.enqueue(bytes); c.close(); } });
  let failure = null;
  const chunks = parseJsonEventStream({ stream, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(part, controller) {
        if (!part.success) throw part.error;
        controller.enqueue(part.value);
      },
    }));
  let last = null;
  for await (const message of readUIMessageStream({
    stream: chunks, onError: (e) => { failure = failure ?? `error chunk: ${e.message}`; },
    terminateOnError: false,
  })) {
    last = message;
  }
  return { failure, last };
}

const input = JSON.parse(await new Response(process.stdin).text());
const results = [];
for (const c of input.cases) {
  try {
    if (c.protocol === "agui") {
      const state = await agui(c.body);
      results.push({ id: c.id, error: null, message: null, state });
    } else {
      const { failure, last } = await ai(c.body);
      results.push({ id: c.id, error: null, errorChunk: failure, message: last });
    }
  } catch (exc) {
    results.push({ id: c.id, error: String(exc && exc.message ? exc.message : exc), message: null });
  }
}
console.log(JSON.stringify({ results }));
