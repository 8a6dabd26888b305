// One exchange through the AI SDK's own chat (the `ai` package's AbstractChat,
// which useChat wraps) against a server the Python test started: prints the
// chat's status and error, the chunks the transport read, and the
// assistant message. With "abort", the chat is stopped (chat.stop(), the
// stop button) once the first text delta arrives.
// Usage: node aisdk_chat.mjs URL [abort]
import { DefaultChatTransport } from "ai";
import { Chat } from "./memory_chat.mjs";


const [url, mode] = process.argv.slice(2);
const chunks = [];
let stopped = false;
let chat;

class LoggingTransport extends DefaultChatTransport {
  processResponseStream(stream) {
    return super.processResponseStream(stream).pipeThrough(new TransformStream({
      transform(chunk, controller) {
        chunks.push(chunk);
        controller.enqueue(chunk);
        if (mode === "abort" && !stopped && chunk.type === "text-delta") {
          stopped = true;
          chat.stop();
        }
      },
    }));
  }
}

let onError = null;
const finishes = [];
chat = new Chat({
  id: "chat-run",
  transport: new LoggingTransport({ api: url }),
  onError: (e) => { onError = String(e); },
  onFinish: ({ isAbort, isError, finishReason }) => { finishes.push({ isAbort, isError, finishReason: finishReason ?? null }); },
});
let thrown = null;
try {
  await chat.sendMessage({ text: "Find Ada's contact" });
} catch (exc) {
  thrown = String(exc);
}
console.log(JSON.stringify({
  status: chat.status, error: chat.error ? String(chat.error.message) : null, onError, thrown,
  chunks, finishes, stopped, messages: chat.messages,
}));
