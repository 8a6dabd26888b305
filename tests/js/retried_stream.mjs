// Two runs of one conversation whose first reply's stream is cut and sent
// again by the server, read by the real clients: AG-UI through @ag-ui/client's
// HttpAgent, the AI SDK through the `ai` package's AbstractChat (what useChat
// wraps). Prints the events or chunks of the first run and the messages after
// each run, so the test can check that the abandoned attempt's text is told
// apart (never appended to the retry's) and left out of the history sent back.
// Usage: node retried_stream.mjs agui|ai URL
import { HttpAgent } from "@ag-ui/client";
import { DefaultChatTransport } from "ai";
import { Chat } from "./memory_chat.mjs";

const [protocol, url] = process.argv.slice(2);
const out = { error: null, first: [], afterFirst: null, afterSecond: null };

async function agui() {
  const agent = new HttpAgent({ url, threadId: "thread-retry" });
  agent.messages = [{ id: "u1", role: "user", content: "Say hello" }];
  let events = out.first;
  const subscriber = {
    onEvent({ event }) { events.push(event); },
    onRunErrorEvent({ event }) { out.error = event.message; },
  };
  await agent.runAgent({ runId: "run-1" }, subscriber);
  out.afterFirst = structuredClone(agent.messages);
  events = [];
  agent.messages.push({ id: "u2", role: "user", content: "Again?" });
  await agent.runAgent({ runId: "run-2" }, subscriber);
  out.afterSecond = structuredClone(agent.messages);
}


async function ai() {
  let logging = true;
  class LoggingTransport extends DefaultChatTransport {
    processResponseStream(stream) {
      return super.processResponseStream(stream).pipeThrough(new TransformStream({
        transform(chunk, controller) {
          if (logging) out.first.push(chunk);
          controller.enqueue(chunk);
        },
      }));
    }
  }
  const chat = new Chat({
    id: "chat-retry", transport: new LoggingTransport({ api: url }),
    onError: (e) => { out.error = String(e); },
  });
  await chat.sendMessage({ text: "Say hello" });
  out.afterFirst = structuredClone(chat.messages);
  logging = false;
  await chat.sendMessage({ text: "Again?" });
  out.afterSecond = structuredClone(chat.messages);
}

try {
  await (protocol === "agui" ? agui() : ai());
} catch (exc) {
  out.error = out.error ?? String(exc);
}
console.log(JSON.stringify(out));
