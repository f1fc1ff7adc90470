// wiki-memory for OpenCode: forwards the session's events to `wiki-memory hook opencode EVENT`
// and hands the project's memory to the model through OpenCode's system prompt.
//
// Written by `wiki-memory install opencode`; `wiki-memory uninstall opencode` removes it.
// The payloads it sends are read by wiki_memory/capture/opencode.py.
//
// - Capture is fire and forget: each call runs detached, its payload handed over in a file
//   (no pipe to keep open), so OpenCode never waits for it and an exiting `opencode run`
//   does not cut it short.
// - Injection waits, but only so long: a new session's handoff (asked for when the session is
//   created) at most START_WAIT_MS, a prompt's context at most PROMPT_WAIT_MS. What arrives is
//   added to the system prompt of the calls made with the session's own model. A tool call
//   that failed is the one capture the plugin waits for (at most ERROR_WAIT_MS, at the next
//   model call): what the hook prints back is the gotcha its error is about, added for the
//   rest of the turn.
// - The project is the session's own directory, resolved again by every call.
// - Nothing here may stop OpenCode: every hook catches everything.

import { spawn } from "node:child_process"
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

// The installer writes this installation's command on the next line.
const WIKI_MEMORY = ["wiki-memory"] // wiki-memory:command
const PLUGIN_VERSION = "1" // wiki-memory:plugin-version
const START_WAIT_MS = 10000
const PROMPT_WAIT_MS = 3000
const ERROR_WAIT_MS = 3000
const MAX_OUTPUT = 1 << 20 // characters of a hook's stdout read at most

const sessions = new Map() // session id -> what the plugin knows of it
const roles = new Map() // message id -> "user" | "assistant"

function session(id) {
  let s = sessions.get(id)
  if (!s) {
    s = { directory: null, root: null, model: null, start: null, startedAt: 0, handoff: "", prompt: "", answer: null }
    sessions.set(id, s)
  }
  return s
}

// The payload goes to the hook as its stdin through a file, unlinked once open.
function stdinOf(payload) {
  const dir = mkdtempSync(join(tmpdir(), "wiki-memory-"))
  const path = join(dir, "payload.json")
  try {
    writeFileSync(path, JSON.stringify(payload), { mode: 0o600 })
    return openSync(path, "r")
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

function run(event, payload, stdout) {
  const fd = stdinOf(payload)
  try {
    return spawn(WIKI_MEMORY[0], [...WIKI_MEMORY.slice(1), "hook", "opencode", event], {
      stdio: [fd, stdout, "ignore"],
      detached: true,
    })
  } finally {
    closeSync(fd)
  }
}

// Fire and forget.
function fire(event, payload) {
  try {
    const child = run(event, payload, "ignore")
    child.on("error", () => {})
    child.unref()
  } catch {}
}

// Run the hook and resolve to the context it prints, or "" after `waitMs` (the hook is then
// stopped: what it would say comes too late) or on any failure.
function ask(event, payload, waitMs) {
  return new Promise((resolve) => {
    let child
    let out = ""
    let timer = null
    let settled = false
    const finish = (value) => {
      if (settled) return
      settled = true
      if (timer) clearTimeout(timer)
      resolve(value)
    }
    try {
      child = run(event, payload, "pipe")
    } catch {
      return finish("")
    }
    child.on("error", () => finish(""))
    child.stdout.on("data", (chunk) => {
      if (out.length < MAX_OUTPUT) out += chunk
    })
    child.on("close", () => finish(contextOf(out)))
    timer = setTimeout(() => {
      finish("")
      try {
        child.kill("SIGTERM")
      } catch {}
    }, waitMs)
    child.unref()
  })
}

// The hook prints `{"context": "..."}` (see OpenCode.envelope in capture/opencode.py).
function contextOf(out) {
  try {
    const data = JSON.parse(out.trim() || "{}")
    return typeof data.context === "string" ? data.context : ""
  } catch {
    return ""
  }
}

function within(promise, ms) {
  if (ms <= 0) return Promise.resolve("")
  return Promise.race([promise, new Promise((resolve) => setTimeout(() => resolve(""), ms))])
}

export const WikiMemory = async ({ directory }) => {
  const base = (id, s) => ({ session_id: id, cwd: s.directory || directory, time: Date.now(), plugin: PLUGIN_VERSION })

  // A child session (a sub-agent) reports to its root session and gets no handoff of its own.
  const rootOf = (id) => {
    let current = id
    for (let i = 0; i < 16; i++) {
      const parent = sessions.get(current)?.root
      if (!parent) return current
      current = parent
    }
    return current
  }

  const startSession = (id, s, source, info) => {
    s.startedAt = Date.now()
    s.start = ask("session.created", { ...base(id, s), source, info }, START_WAIT_MS).then((text) => {
      s.handoff = text
      return text
    })
  }

  const onEvent = (event) => {
    const p = event.properties || {}
    switch (event.type) {
      case "session.created":
      case "session.updated": {
        const info = p.info || {}
        if (!info.id) return
        const s = session(info.id)
        s.directory = info.directory || s.directory
        if (info.parentID) s.root = info.parentID
        if (event.type === "session.created" && !info.parentID && !s.start) startSession(info.id, s, "startup", info)
        return
      }
      case "message.updated": {
        const info = p.info || {}
        if (roles.size > 10000) roles.clear() // a long session: only the latest messages matter
        if (info.id && info.role) roles.set(info.id, info.role)
        return
      }
      case "message.part.updated": {
        const part = p.part || {}
        if (!part.sessionID) return
        const id = rootOf(part.sessionID)
        const s = session(id)
        // A failed call: a tool error, or a shell command that exited non-zero (OpenCode says
        // "completed" for those, with `metadata.exit`).
        const failed = part.state?.status === "error" || (part.state?.metadata?.exit ?? 0) !== 0
        if (part.type === "tool" && failed && (part.state?.status === "completed" || part.state?.status === "error")) {
          const payload = { ...base(id, s), part, child: id !== part.sessionID ? part.sessionID : undefined }
          s.failed = [...(s.failed || []), ask("message.part.updated", payload, ERROR_WAIT_MS)]
        } else if (part.type === "tool" && part.state?.status === "completed") {
          fire("message.part.updated", { ...base(id, s), part, child: id !== part.sessionID ? part.sessionID : undefined })
        } else if (part.type === "text" && part.time?.end && !part.synthetic && id === part.sessionID) {
          if (roles.get(part.messageID) !== "assistant") return
          // The turn's answer: the text parts of its last assistant message.
          if (!s.answer || s.answer.message !== part.messageID) s.answer = { message: part.messageID, parts: new Map() }
          s.answer.parts.set(part.id, part.text || "")
        }
        return
      }
      case "session.idle": {
        if (!p.sessionID || sessions.get(p.sessionID)?.root) return
        const s = session(p.sessionID)
        const text = s.answer ? [...s.answer.parts.values()].join("\n\n").trim() : ""
        s.answer = null
        fire("session.idle", { ...base(p.sessionID, s), text, model: s.model })
        return
      }
      case "session.compacted": {
        if (!p.sessionID) return
        const id = rootOf(p.sessionID)
        fire("session.compacted", base(id, session(id)))
        return
      }
      case "session.error": {
        if (!p.sessionID || sessions.get(p.sessionID)?.root) return
        fire("session.error", { ...base(p.sessionID, session(p.sessionID)), error: p.error || null })
        return
      }
    }
  }

  return {
    event: async ({ event }) => {
      try {
        onEvent(event)
      } catch {}
    },

    "chat.message": async (input, output) => {
      try {
        const s = session(input.sessionID)
        if (s.root) return
        // `opencode run` gives the model and agent on the message only.
        const model = input.model || output.message?.model
        const agent = input.agent || output.message?.agent
        if (model) s.model = model
        const parts = (output.parts || [])
          .filter((part) => part.type === "text" && !part.synthetic)
          .map((part) => ({ type: "text", text: part.text }))
        const payload = { ...base(input.sessionID, s), agent, model, parts }
        // The prompt is recorded; what the hook prints back is this prompt's context (the
        // pages recalled for it), added to the system prompt of this turn's calls.
        s.moments = []
        s.prompt = await ask("chat.message", payload, PROMPT_WAIT_MS)
      } catch {}
    },

    "experimental.chat.system.transform": async (input, output) => {
      try {
        const s = session(input.sessionID)
        if (s.root) return
        // Side calls on another model (the session's title, on the small model) get nothing.
        if (s.model?.modelID && input.model?.id && input.model.id !== s.model.modelID) return
        // A session this plugin did not see created (resumed, or begun before it loaded).
        if (!s.start) startSession(input.sessionID, s, "resume", null)
        const handoff = s.handoff || (await within(s.start, START_WAIT_MS - (Date.now() - s.startedAt)))
        if (s.failed?.length) {
          // The gotchas of the errors of this turn's failed calls, for the rest of the turn.
          const failed = s.failed
          s.failed = []
          const found = await within(Promise.all(failed), ERROR_WAIT_MS)
          s.moments = [...(s.moments || []), ...(Array.isArray(found) ? found : [])]
        }
        const context = [handoff, s.prompt, ...(s.moments || [])].filter((text) => text && text.trim()).join("\n\n")
        if (context) output.system.push(context)
      } catch {}
    },
  }
}
