// The view's side of MCP Apps (SEP-1865): JSON-RPC 2.0 over postMessage with the host window.
// The view asks (ui/initialize, tools/call), the host answers and notifies (tool-input,
// tool-result, host-context-changed). Only messages from the parent window are read.
"use strict";

const Bridge = (() => {
  const pending = new Map();
  const listeners = {};
  let nextId = 1;
  let hostCapabilities = {};

  function post(message) {
    window.parent.postMessage(message, "*");
  }

  function request(method, params) {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      post({ jsonrpc: "2.0", id, method, params: params || {} });
    });
  }

  function notify(method, params) {
    post({ jsonrpc: "2.0", method, params: params || {} });
  }

  function on(method, handler) {
    listeners[method] = handler;
  }

  function answer(message) {
    // Requests from the host: ping and teardown are answered with an empty result.
    const known = message.method === "ping" || message.method === "ui/resource-teardown";
    if (known) {
      post({ jsonrpc: "2.0", id: message.id, result: {} });
    } else {
      post({ jsonrpc: "2.0", id: message.id,
             error: { code: -32601, message: "Method not found: " + message.method } });
    }
  }

  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.method === undefined && message.id !== undefined) {
      const waiting = pending.get(message.id);
      if (!waiting) return;
      pending.delete(message.id);
      if (message.error) {
        waiting.reject(new Error(String(message.error.message || "the host refused")));
      } else {
        waiting.resolve(message.result || {});
      }
      return;
    }
    if (typeof message.method !== "string") return;
    if (message.id !== undefined) {
      answer(message);
      return;
    }
    const handler = listeners[message.method];
    if (handler) handler(message.params || {});
  });

  function applyContext(context) {
    if (!context) return;
    if (context.theme === "dark" || context.theme === "light") {
      document.documentElement.dataset.theme = context.theme;
    }
    const variables = (context.styles && context.styles.variables) || {};
    for (const [name, value] of Object.entries(variables)) {
      if (name.startsWith("--") && typeof value === "string") {
        document.documentElement.style.setProperty(name, value);
      }
    }
  }

  on("ui/notifications/host-context-changed", applyContext);

  async function connect(name) {
    const result = await request("ui/initialize", {
      appInfo: { name, version: "1.0.0" },
      appCapabilities: { availableDisplayModes: ["inline"] },
      protocolVersion: "2026-01-26",
    });
    hostCapabilities = result.hostCapabilities || {};
    applyContext(result.hostContext);
    notify("ui/notifications/initialized", {});
    // Tell a host that sizes the frame to its content how tall the view is.
    let last = 0;
    new ResizeObserver(() => {
      // The body's own height: the document's scroll height never drops below the frame's.
      const height = Math.ceil(document.body.getBoundingClientRect().height);
      if (height !== last) {
        last = height;
        notify("ui/notifications/size-changed",
               { width: document.documentElement.scrollWidth, height });
      }
    }).observe(document.body);
    return result;
  }

  function canCallTools() {
    return Boolean(hostCapabilities.serverTools);
  }

  async function callTool(name, args) {
    const result = await request("tools/call", { name, arguments: args });
    if (result.isError) {
      const text = (result.content || []).filter((b) => b.type === "text")
        .map((b) => b.text).join("\n");
      throw new Error(text || name + " failed");
    }
    return result;
  }

  return { on, connect, callTool, canCallTools, notify };
})();

// Build an element: attributes and text are set as values, never parsed as markup.
function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === false || value === null || value === undefined) continue;
    node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function say(text, kind) {
  const status = document.getElementById("status");
  status.textContent = text;
  status.dataset.kind = kind || "info";
}
