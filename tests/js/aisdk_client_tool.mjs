// A client-side tool through the AI SDK's own chat (the `ai` package's
// AbstractChat, which useChat wraps): the server offers `pick_color`, which
// only the client runs; onToolCall answers it with addToolOutput, and
// sendAutomaticallyWhen (lastAssistantMessageIsCompleteWithToolCalls) sends
// the messages back, so the model continues with the output.
// Usage: node aisdk_client_tool.mjs URL
import { AbstractChat, DefaultChatTransport, lastAssistantMessageIsCompleteWithToolCalls } from "ai";

class MemoryState {
  constructor() { this.status = "ready"; this.error = undefined; this.messages = []; }
  pushMessage(message) { this.messages = [...this.messages, message]; }
  popMessage() { this.messages = this.messages.slice(0, -1); }
  replaceMessage(index, message) {
    this.messages = this.messages.map((m, i) => (i === index ? message : m));
  }
  snapshot(thing) { return structuredClone(thing); }
}

class Chat extends AbstractChat {
  constructor(init) { super({ ...init, state: new MemoryState() }); }
}

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
