// The `ai` package's reader in a browser page (bundled by esbuild in the
// test): fetches the UI message stream from the page's own server and leaves
// what readUIMessageStream made of it in window.agentflowResult.
import { DefaultChatTransport, readUIMessageStream } from "ai";

const transport = new DefaultChatTransport({ api: "/chat" });
const messages = [{ id: "u1", role: "user", parts: [{ type: "text", text: "Find Ada's contact" }] }];
const snapshots = [];
let error = null;
try {
  const stream = await transport.sendMessages({
    chatId: "chat-browser", messages, trigger: "submit-message", messageId: undefined,
    abortSignal: undefined,
  });
  for await (const message of readUIMessageStream({ stream, onError: (e) => { error = String(e); } })) {
    snapshots.push(structuredClone(message));
    document.getElementById("out").textContent = JSON.stringify(message.parts.at(-1) ?? null);
  }
} catch (exc) {
  error = String(exc);
}
window.agentflowResult = { snapshots, error };
