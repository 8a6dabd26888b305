// A client-side tool through the AI SDK's own chat (the `ai` package's
// AbstractChat, which useChat wraps): the server offers `pick_color`, which
// only the client runs; onToolCall answers it with addToolOutput, and
// sendAutomaticallyWhen (lastAssistantMessageIsCompleteWithToolCalls) sends
// the messages back, so the model continues with the output.
// Usage: node aisdk_client_tool.mjs URL
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithToolCalls } from "ai";
import { Chat } from "./memory_chat.mjs";


const [url] = process.argv.slice(2);
const calls = [];
const finishes = [];
let error = null;
const chat = new Chat({
  id: "chat-client-tool",
  transport: new DefaultChatTransport({ api: url }),
  sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
  onToolCall: ({ toolCall }) => {
    calls.push({ toolName: toolCall.toolName, toolCallId: toolCall.toolCallId, input: toolCall.input });
    if (toolCall.toolName === "pick_color") {  // no await here: the chat's own advice
      chat.addToolOutput({ tool: "pick_color", toolCallId: toolCall.toolCallId, output: { color: "teal" } });
    }
  },
  onFinish: ({ finishReason, message }) => { finishes.push({ finishReason, parts: message.parts.length }); },
  onError: (e) => { error = String(e); },
});
try {
  await chat.sendMessage({ text: "Pick a color for the banner" });
} catch (exc) {
  error = String(exc);
}
console.log(JSON.stringify({ calls, finishes, error, status: chat.status, messages: chat.messages }));
