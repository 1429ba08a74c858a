// The floorplan viewer: the drawing (the server's SVG shown as an image, never as markup) with
// a hit area per room on top, pan and zoom, the room list, a room's metadata, and edits that
// the host runs as tool calls (execute_action on a stored plan's page, modify_floorplan on
// DSL text). Every name and label is set as text.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const state = {
  input: {}, plan: null, version: null, dsl: null, rooms: [], selected: null,
  box: [0, 0, 100, 100], view: { x: 0, y: 0, k: 1 }, edited: false,
};

const drawing = document.getElementById("drawing");
const viewport = document.getElementById("viewport");

// -- the tool result ----------------------------------------------------------------------

function flatten(rooms, out) {
  for (const room of rooms || []) {
    out.push(room);
    flatten(room.subRooms, out);
  }
  return out;
}

function textBlocks(result) {
  return (result.content || []).filter((b) => b.type === "text").map((b) => b.text);
}

function show(result) {
  const data = result.structuredContent || {};
  if (data.success === false) {
    const first = (data.errors || [])[0] || {};
    say("The plan cannot be drawn: " + (first.message || "unknown error"), "error");
    return;
  }
  if (typeof data.plan === "string") {
    state.plan = data.plan;
    state.version = data.version || null;
  }
  document.getElementById("title").textContent = state.plan
    ? state.plan + (state.version ? " · version " + state.version : "") : "Floorplan";
  state.rooms = flatten(data.rooms, []);
  listRooms();
  const svg = textBlocks(result).find((t) => t.trimStart().startsWith("<svg"));
  const png = (result.content || []).find((b) => b.type === "image");
  if (svg) {
    draw(svg);
    say(state.rooms.length + " room(s). Drag to pan, scroll or use +/− to zoom.");
  } else if (Bridge.canCallTools() && (state.plan || state.dsl)) {
    if (png) picture("data:" + png.mimeType + ";base64," + png.data, data.imageSize);
    redraw().catch((error) => say(error.message, "error"));
  } else if (png) {
    picture("data:" + png.mimeType + ";base64," + png.data, data.imageSize);
    say(state.rooms.length + " room(s).");
  }
}

function renderArgs() {
  if (state.plan) {
    const args = { plan: state.plan, format: "svg" };
    if (state.version && !state.edited && state.input.version) args.version = state.version;
    return args;
  }
  const args = {};
  for (const key of ["floorIndex", "renderAllFloors", "multiFloorLayout"]) {
    if (key in state.input) args[key] = state.input[key];
  }
  return Object.assign(args, { dsl: state.dsl, format: "svg" });
}

async function redraw() {
  show(await Bridge.callTool("render_floorplan", renderArgs()));
}

// -- the drawing --------------------------------------------------------------------------

function svgNode(tag, attributes) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  return node;
}

function offsetOf(node) {
  // The sum of the translate() of the groups around a room (a floor's position).
  let x = 0;
  let y = 0;
  for (let at = node.parentNode; at && at.getAttribute; at = at.parentNode) {
    const found = /translate\(\s*([-\d.eE]+)[\s,]+([-\d.eE]+)\s*\)/.exec(
      at.getAttribute("transform") || "");
    if (found) {
      x += Number(found[1]);
      y += Number(found[2]);
    }
  }
  return [x, y];
}

function base64(text) {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function draw(svgText) {
  // Parsed in a document of its own (inert: nothing in it runs) only to read the geometry.
  const parsed = new DOMParser().parseFromString(svgText, "image/svg+xml");
  const root = parsed.documentElement;
  const box = (root.getAttribute("viewBox") || "").split(/[\s,]+/).map(Number);
  if (root.localName !== "svg" || box.length !== 4 || box.some((n) => !Number.isFinite(n))) {
    say("The drawing could not be read.", "error");
    return;
  }
  state.box = box;
  drawing.setAttribute("viewBox", box.join(" "));
  viewport.replaceChildren(svgNode("image", {
    href: "data:image/svg+xml;base64," + base64(svgText),
    x: box[0], y: box[1], width: box[2], height: box[3],
  }));
  for (const rect of parsed.querySelectorAll("rect.room")) {
    const [dx, dy] = offsetOf(rect);
    const name = rect.getAttribute("data-room") || "";
    const hit = svgNode("rect", {
      class: "hit", x: Number(rect.getAttribute("x")) + dx, y: Number(rect.getAttribute("y")) + dy,
      width: Number(rect.getAttribute("width")), height: Number(rect.getAttribute("height")),
    });
    hit.dataset.room = name;
    const title = svgNode("title", {});
    title.textContent = name;
    hit.append(title);
    hit.addEventListener("click", () => { if (!drag.moved) select(name); });
    viewport.append(hit);
  }
  mark();
}

function picture(href, size) {
  // A PNG only (the host cannot call tools): the image without hit areas.
  const width = (size && size.width) || 100;
  const height = (size && size.height) || 100;
  state.box = [0, 0, width, height];
  drawing.setAttribute("viewBox", state.box.join(" "));
  viewport.replaceChildren(svgNode("image", { href, x: 0, y: 0, width, height }));
}

// -- pan and zoom -------------------------------------------------------------------------

function applyView() {
  const { x, y, k } = state.view;
  viewport.setAttribute("transform", `translate(${+x.toFixed(4)},${+y.toFixed(4)}) ` +
                                     `scale(${+k.toFixed(4)})`);
}

function zoom(factor, cx, cy) {
  const view = state.view;
  const k = Math.min(40, Math.max(0.2, view.k * factor));
  const applied = k / view.k;
  const px = cx === undefined ? state.box[0] + state.box[2] / 2 : cx;
  const py = cy === undefined ? state.box[1] + state.box[3] / 2 : cy;
  state.view = { x: px - applied * (px - view.x), y: py - applied * (py - view.y), k };
  applyView();
}

function toDrawing(event) {
  const matrix = drawing.getScreenCTM();
  if (!matrix) return { x: 0, y: 0 };
  const point = new DOMPoint(event.clientX, event.clientY).matrixTransform(matrix.inverse());
  return { x: point.x, y: point.y };
}

const drag = { active: false, moved: false, start: null, from: null };

drawing.addEventListener("pointerdown", (event) => {
  drag.active = true;
  drag.moved = false;
  drag.start = toDrawing(event);
  drag.from = { ...state.view };
  drag.pixels = [event.clientX, event.clientY];
});
drawing.addEventListener("pointermove", (event) => {
  if (!drag.active) return;
  if (Math.hypot(event.clientX - drag.pixels[0], event.clientY - drag.pixels[1]) > 3) {
    if (!drag.moved) drawing.setPointerCapture(event.pointerId);
    drag.moved = true;
  }
  if (!drag.moved) return;
  const at = toDrawing(event);
  state.view = { ...drag.from, x: drag.from.x + at.x - drag.start.x,
                 y: drag.from.y + at.y - drag.start.y };
  applyView();
});
for (const type of ["pointerup", "pointercancel"]) {
  drawing.addEventListener(type, () => {
    drag.active = false;
    setTimeout(() => { drag.moved = false; }, 0);
  });
}
drawing.addEventListener("wheel", (event) => {
  event.preventDefault();
  const at = toDrawing(event);
  zoom(event.deltaY < 0 ? 1.2 : 1 / 1.2, at.x, at.y);
}, { passive: false });
document.getElementById("zoom-in").addEventListener("click", () => zoom(1.25));
document.getElementById("zoom-out").addEventListener("click", () => zoom(0.8));
document.getElementById("zoom-reset").addEventListener("click", () => {
  state.view = { x: 0, y: 0, k: 1 };
  applyView();
});

// -- rooms and their metadata -------------------------------------------------------------

function listRooms() {
  const list = document.getElementById("rooms");
  list.replaceChildren(...state.rooms.map((room) => {
    const button = el("button", { type: "button", "aria-pressed": "false" }, room.name);
    button.dataset.room = room.name;
    button.addEventListener("click", () => select(room.name));
    return el("li", {}, button);
  }));
  if (state.selected && !state.rooms.some((r) => r.name === state.selected)) {
    state.selected = null;
  }
  if (state.selected) select(state.selected);
  else document.getElementById("details").hidden = true;
}

function mark() {
  for (const node of document.querySelectorAll("[data-room]")) {
    const on = node.dataset.room === state.selected;
    if (node.localName === "button") node.setAttribute("aria-pressed", String(on));
    else node.classList.toggle("selected", on);
  }
}

function rows(room) {
  const out = [["Name", room.name], ["Kind", room.kind]];
  if (room.floor) out.push(["Floor", room.floor]);
  if (room.size) out.push(["Size", room.size.width + " × " + room.size.height]);
  if (room.area !== undefined) out.push(["Area", room.area]);
  if (room.resolvedPosition) {
    out.push(["Position", room.resolvedPosition.x + ", " + room.resolvedPosition.y]);
  }
  if (room.relativePosition) {
    const rel = room.relativePosition;
    out.push(["Placed", rel.direction + " " + rel.reference +
                        (rel.gap !== undefined ? " (gap " + rel.gap + ")" : "")]);
  }
  if (room.label !== undefined) out.push(["Label", room.label]);
  if (room.height !== undefined) out.push(["Height", room.height]);
  if (room.walls) {
    out.push(["Walls", Object.entries(room.walls).map(([s, t]) => s + ": " + t).join(", ")]);
  }
  if (room.subRooms && room.subRooms.length) {
    out.push(["Sub-rooms", room.subRooms.map((r) => r.name).join(", ")]);
  }
  return out;
}

function select(name) {
  const room = state.rooms.find((r) => r.name === name);
  if (!room) return;
  state.selected = name;
  mark();
  document.getElementById("details").hidden = false;
  document.getElementById("details-title").textContent = room.name;
  document.getElementById("meta").replaceChildren(
    ...rows(room).flatMap(([key, value]) => [el("dt", {}, key), el("dd", {}, value)]));
  field("newName").value = room.name;
  field("width").value = room.size ? room.size.width : "";
  field("height").value = room.size ? room.size.height : "";
  field("label").value = room.label || "";
  document.getElementById("edit").hidden = !Bridge.canCallTools();
}

function field(name) {
  return document.querySelector(`#edit input[name="${name}"]`);
}

// -- edits through the host ---------------------------------------------------------------

function operations(room) {
  const ops = [];
  const width = Number(field("width").value);
  const height = Number(field("height").value);
  if (room.size && (width !== room.size.width || height !== room.size.height)) {
    ops.push({ action: "resize_room", target: room.name, params: { width, height } });
  }
  const label = field("label").value.trim();
  if (label !== (room.label || "")) {
    ops.push({ action: "set_label", target: room.name, params: { label: label || null } });
  }
  const newName = field("newName").value.trim();
  if (newName && newName !== room.name) {
    ops.push({ action: "rename_room", target: room.name, params: { newName } });
  }
  return ops;
}

async function save(ops) {
  if (state.plan) {
    const [studio, name] = state.plan.split("/");
    const path = "/studios/" + studio + "/f/" + name;
    let message = "";
    for (const op of ops) {
      const params = Object.fromEntries(
        Object.entries({ target: op.target, ...op.params }).filter(([, v]) => v !== null));
      const result = await Bridge.callTool("execute_action", { path, action: op.action, params });
      message = (result.structuredContent || {}).message || message;
    }
    return message;
  }
  const result = await Bridge.callTool("modify_floorplan", { dsl: state.dsl, operations: ops });
  state.dsl = result.structuredContent.dsl;
  return (result.structuredContent.changes || []).map((c) => c.message).join(" ");
}

// A button and Enter, not a form submission: hosts may sandbox the frame without allow-forms.
async function edit() {
  const room = state.rooms.find((r) => r.name === state.selected);
  if (!room) return;
  const ops = operations(room);
  if (!ops.length) {
    say("Nothing changed.");
    return;
  }
  const renamed = ops.find((op) => op.action === "rename_room");
  say("Saving…");
  try {
    const message = await save(ops);
    state.edited = true;
    if (renamed) state.selected = renamed.params.newName;
    await redraw();
    say(message || "Saved.");
  } catch (error) {
    say(error.message, "error");
  }
}

document.getElementById("save").addEventListener("click", edit);
document.getElementById("edit").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && event.target.localName === "input") edit();
});

// -- start --------------------------------------------------------------------------------

Bridge.on("ui/notifications/tool-input", (params) => {
  state.input = params.arguments || {};
  if (typeof state.input.dsl === "string") state.dsl = state.input.dsl;
});
Bridge.on("ui/notifications/tool-result", show);
Bridge.on("ui/notifications/tool-cancelled", () => say("The call was cancelled.", "error"));
Bridge.connect("harmonic-floorplan-viewer").catch((error) => say(error.message, "error"));
