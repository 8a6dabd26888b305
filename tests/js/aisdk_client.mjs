// Reads a UI message stream with the real `ai` package (DefaultChatTransport,
// as useChat sends and parses, then readUIMessageStream) from a server the
// Python test started; prints the message snapshots and chunks as JSON.
// Usage: node aisdk_client.mjs URL
import { DefaultChatTransport, readUIMessageStream } from "ai";

const [url] = process.argv.slice(2);
const transport = new DefaultChatTransport({ api: url });
const messages = [
  { id: "u0", role: "user", parts: [{ type: "text", text: "earlier question" }] },
  { id: "a0", role: "assistant", parts: [{ type: "text", text: "earlier answer" }] },
  { id: "u1", role: "user", parts: [{ type: "text", text: "Find Ada's contact" }] },
];
const snapshots = [];
const chunks = [];
let error = null;
try {
  const stream = await transport.sendMessages({
    chatId: "chat-1", messages, trigger: "submit-message", messageId: undefined,
    abortSignal: undefined,
  });
  const [forReader, forLog] = stream.tee();
  const logging = (async () => {
    for await (const chunk of forLog) chunks.push(chunk);
  })();
  for await (const message of readUIMessageStream({
    stream: forReader, onError: (exc) => { error = String(exc); },
  })) {
    snapshots.push(structuredClone(message));
  }
  await logging;
} catch (exc) {
  error = String(exc);
}
console.log(JSON.stringify({ snapshots, chunks: chunks.map((c) => c.type), error }));
