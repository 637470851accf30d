// Expands the dominator tree: a click on ▸ loads the node's children from
// /api/children (a page at a time; "more" loads the next). Text is set with
// textContent only, never parsed as HTML.
"use strict";

function formatBytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return i === 0 ? n + " B" : v.toFixed(1) + " " + units[i];
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function row(n) {
  const li = el("li", "node");
  li.dataset.node = n.id;
  li.dataset.children = n.child_count;
  if (n.child_count > 0) {
    const b = el("button", "toggle", "▸");
    b.setAttribute("aria-label", "expand");
    li.appendChild(b);
  } else {
    li.appendChild(el("span", "leaf", "·"));
  }
  li.appendChild(document.createTextNode(" "));
  const a = el("a", "label", n.label);
  a.href = "/node/" + n.id;
  li.appendChild(a);
  li.appendChild(document.createTextNode(" "));
  li.appendChild(el("span", "retained", formatBytes(n.retained_bytes)));
  li.appendChild(document.createTextNode(" "));
  li.appendChild(el("span", "own", "own " + formatBytes(n.size_bytes)));
  li.appendChild(document.createTextNode(" "));
  li.appendChild(el("span", "objects", n.retained_objects + (n.retained_objects === 1 ? " object" : " objects")));
  return li;
}

async function load(ul, node, offset) {
  const resp = await fetch("/api/children/" + node + "?offset=" + offset);
  if (!resp.ok) {
    ul.appendChild(el("li", "error", "could not load: " + resp.status));
    return;
  }
  const page = await resp.json();
  for (const n of page.children) ul.appendChild(row(n));
  if (page.next_offset > 0) {
    const li = el("li", "more-row");
    const b = el("button", "more", "more (" + page.child_count + " in all)");
    b.dataset.node = node;
    b.dataset.offset = page.next_offset;
    li.appendChild(b);
    ul.appendChild(li);
  }
  ul.dataset.loaded = "true";
}

document.addEventListener("click", async (ev) => {
  const t = ev.target;
  if (!(t instanceof HTMLButtonElement)) return;
  if (t.classList.contains("toggle")) {
    const li = t.closest("li.node");
    let ul = li.querySelector(":scope > ul.tree");
    if (ul) {
      ul.hidden = !ul.hidden;
      t.textContent = ul.hidden ? "▸" : "▾";
      return;
    }
    ul = el("ul", "tree");
    ul.dataset.parent = li.dataset.node;
    li.appendChild(ul);
    t.textContent = "▾";
    t.disabled = true;
    await load(ul, li.dataset.node, 0);
    t.disabled = false;
  } else if (t.classList.contains("more")) {
    const ul = t.closest("ul.tree");
    t.closest("li").remove();
    await load(ul, t.dataset.node, t.dataset.offset);
  }
});
