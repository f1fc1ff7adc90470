// wiki-memory viewer: the link graph on a canvas. A small force layout (pages repel, links
// pull), coloured by page type; click a page to open it, drag a page or the background,
// scroll to zoom. The data is the JSON block the server put in the page.
"use strict";

const COLOURS = {
  decision: "#3b6fd1", gotcha: "#d1493b", procedure: "#2e9e6a", fact: "#8a5cc7",
  preference: "#d18f1f", note: "#7d8796", session: "#3aa7b8", handoff: "#c2478f",
};

document.addEventListener("DOMContentLoaded", () => {
  const canvas = document.getElementById("graph");
  const source = document.getElementById("graph-data");
  if (!canvas || !source) return;
  const data = JSON.parse(source.textContent);
  const nodes = data.nodes.map((n, i) => {
    const angle = i * 2.399963; // golden angle: an even start
    const r = 12 * Math.sqrt(i + 1);
    return { ...n, x: r * Math.cos(angle), y: r * Math.sin(angle), vx: 0, vy: 0,
             size: 4 + Math.min(10, Math.sqrt(n.degree) * 2), centre: n.path === data.around };
  });
  const edges = data.edges.map(([s, t]) => [nodes[s], nodes[t]]);
  const ctx = canvas.getContext("2d");
  const view = { x: 0, y: 0, scale: 1 };
  let hover = null;
  let dragging = null;
  let panning = null;
  let moved = false;
  let heat = 1;
  let autoFit = true; // until the person drags or zooms, the layout is kept in view

  function resize() {
    const ratio = window.devicePixelRatio || 1;
    const rect = canvas.getBoundingClientRect();
    canvas.width = rect.width * ratio;
    canvas.height = rect.height * ratio;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  }

  function step() {
    // Repulsion between every pair (a few hundred pages at most), attraction along links,
    // a pull to the centre; the moves cool down until the layout is still.
    for (let i = 0; i < nodes.length; i++) {
      const a = nodes[i];
      for (let j = i + 1; j < nodes.length; j++) {
        const b = nodes[j];
        let dx = a.x - b.x, dy = a.y - b.y;
        let d2 = dx * dx + dy * dy;
        if (d2 < 0.01) { dx = Math.random() - 0.5; dy = Math.random() - 0.5; d2 = 0.5; }
        const f = Math.min(900 / d2, 4);
        const d = Math.sqrt(d2);
        a.vx += (dx / d) * f; a.vy += (dy / d) * f;
        b.vx -= (dx / d) * f; b.vy -= (dy / d) * f;
      }
    }
    for (const [a, b] of edges) {
      const dx = b.x - a.x, dy = b.y - a.y;
      const d = Math.sqrt(dx * dx + dy * dy) || 1;
      const f = (d - 60) * 0.02;
      a.vx += (dx / d) * f; a.vy += (dy / d) * f;
      b.vx -= (dx / d) * f; b.vy -= (dy / d) * f;
    }
    for (const n of nodes) {
      n.vx -= n.x * 0.004; n.vy -= n.y * 0.004;
      if (n === dragging) { n.vx = n.vy = 0; continue; }
      n.x += n.vx * heat; n.y += n.vy * heat;
      n.vx *= 0.6; n.vy *= 0.6;
    }
    heat = Math.max(0, heat - 0.004);
  }

  function toScreen(n) {
    const rect = canvas.getBoundingClientRect();
    return [rect.width / 2 + (n.x + view.x) * view.scale, rect.height / 2 + (n.y + view.y) * view.scale];
  }

  function draw() {
    const rect = canvas.getBoundingClientRect();
    ctx.clearRect(0, 0, rect.width, rect.height);
    const dark = window.matchMedia("(prefers-color-scheme: dark)").matches;
    ctx.lineWidth = 1;
    ctx.strokeStyle = dark ? "rgba(200,210,225,0.18)" : "rgba(40,60,90,0.16)";
    ctx.beginPath();
    for (const [a, b] of edges) {
      const [ax, ay] = toScreen(a);
      const [bx, by] = toScreen(b);
      ctx.moveTo(ax, ay);
      ctx.lineTo(bx, by);
    }
    ctx.stroke();
    const labelAll = nodes.length <= 60 || view.scale > 1.6;
    ctx.font = "12px system-ui, sans-serif";
    const wanted = [];
    for (const n of nodes) {
      const [x, y] = toScreen(n);
      const r = n.size * Math.sqrt(view.scale);
      ctx.beginPath();
      ctx.arc(x, y, r, 0, Math.PI * 2);
      ctx.fillStyle = COLOURS[n.type] || "#7d8796";
      ctx.globalAlpha = n.status === "active" ? 1 : 0.4;
      ctx.fill();
      ctx.globalAlpha = 1;
      if (n === hover || n.centre) {
        ctx.lineWidth = 2.5;
        ctx.strokeStyle = dark ? "#ffffff" : "#1d232b";
        ctx.stroke();
        ctx.lineWidth = 1;
      }
      if (labelAll || n === hover || n.centre || n.degree >= 8) wanted.push([n, x + r + 3, y + 4]);
    }
    // Labels that would overlap one already drawn are left out: the hovered and centred
    // page's first, then the most linked; the others show on hover.
    const rank = (n) => (n === hover ? 2e9 : n.centre ? 1e9 : n.degree || 0);
    wanted.sort((a, b) => rank(b[0]) - rank(a[0]));
    placed = [];
    ctx.fillStyle = dark ? "#e3e7ed" : "#1d232b";
    for (const [n, lx, ly] of wanted) {
      const text = n.title.length > 48 ? n.title.slice(0, 47) + "…" : n.title;
      const box = [lx, ly - 11, lx + ctx.measureText(text).width, ly + 3];
      const clash = placed.some((p) => box[0] < p[2] && p[0] < box[2] && box[1] < p[3] && p[1] < box[3]);
      if (clash && n !== hover && !n.centre) continue;
      placed.push(box);
      ctx.fillText(text, lx, ly);
    }
  }
  let placed = [];

  function nodeAt(event) {
    const rect = canvas.getBoundingClientRect();
    const px = event.clientX - rect.left, py = event.clientY - rect.top;
    let best = null, bestD = Infinity;
    for (const n of nodes) {
      const [x, y] = toScreen(n);
      const d = Math.hypot(x - px, y - py);
      if (d < Math.max(8, n.size * Math.sqrt(view.scale) + 3) && d < bestD) { best = n; bestD = d; }
    }
    return best;
  }

  function fit() {
    const rect = canvas.getBoundingClientRect();
    if (!nodes.length || !rect.width) return;
    const xs = nodes.map((n) => n.x), ys = nodes.map((n) => n.y);
    const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
    view.x = -(x0 + x1) / 2;
    view.y = -(y0 + y1) / 2;
    // Room on the right for the labels.
    view.scale = Math.min(2.2, (rect.width - 260) / Math.max(1, x1 - x0), (rect.height - 60) / Math.max(1, y1 - y0));
    view.x -= 90 / view.scale;
  }

  canvas.addEventListener("pointerdown", (event) => {
    autoFit = false;
    canvas.setPointerCapture(event.pointerId);
    moved = false;
    dragging = nodeAt(event);
    if (!dragging) panning = { x: event.clientX, y: event.clientY, vx: view.x, vy: view.y };
  });
  canvas.addEventListener("pointermove", (event) => {
    if (dragging) {
      const rect = canvas.getBoundingClientRect();
      dragging.x = (event.clientX - rect.left - rect.width / 2) / view.scale - view.x;
      dragging.y = (event.clientY - rect.top - rect.height / 2) / view.scale - view.y;
      moved = true;
      heat = Math.max(heat, 0.3);
    } else if (panning) {
      view.x = panning.vx + (event.clientX - panning.x) / view.scale;
      view.y = panning.vy + (event.clientY - panning.y) / view.scale;
      moved = true;
    } else {
      const found = nodeAt(event);
      if (found !== hover) {
        hover = found;
        canvas.style.cursor = hover ? "pointer" : "grab";
        canvas.title = hover ? `${hover.title}\n${hover.path}` : "";
      }
    }
  });
  canvas.addEventListener("pointerup", (event) => {
    const target = dragging;
    dragging = null;
    panning = null;
    if (target && !moved) window.location.href = target.url;
    void event;
  });
  canvas.addEventListener("wheel", (event) => {
    event.preventDefault();
    autoFit = false;
    view.scale = Math.min(6, Math.max(0.15, view.scale * (event.deltaY < 0 ? 1.12 : 1 / 1.12)));
  }, { passive: false });

  // Lay out a while before the first frame, so the graph does not start as a spiral.
  for (let i = 0; i < 120; i++) step();
  resize();
  window.addEventListener("resize", resize);
  (function frame() {
    if (heat > 0) step();
    else canvas.dataset.settled = "1";
    if (autoFit) fit();
    draw();
    window.requestAnimationFrame(frame);
  })();
  // Where a page is drawn, in the canvas's own pixels (for tests and tools driving the page).
  canvas.labelBoxes = () => placed.map((b) => b.slice());
  canvas.nodePosition = (path) => {
    const node = nodes.find((n) => n.path === path);
    return node ? toScreen(node) : null;
  };
  canvas.dataset.ready = "1";
});
