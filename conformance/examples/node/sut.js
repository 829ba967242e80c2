#!/usr/bin/env node
// An example kcspec conformance SUT for Node.js (plain JavaScript, no dependencies).
// It speaks protocol v1 (JSON lines on stdin/stdout) and implements the four leader-election
// strategies of the semantics document (§6). Run it with:
//   kcspec conformance run --sut "node conformance/examples/node/sut.js" --level elections
"use strict";

const readline = require("readline");

const CAPABILITIES = ["elections"];
const PROFILES = ["kafka-2.8", "kafka-1.1"];
let profile = "kafka-2.8";

function firstOf(list, pred) {
  for (const x of list) if (pred(x)) return x;
  return -1;
}

// §6: one strategy on one partition's input; leader -1 = no electable leader.
function elect(strategy, inp) {
  const ar = inp.assignment;
  const isr = inp.leader_and_isr.isr;
  const online = new Set(inp.online);
  const reachable = new Set(inp.online_or_shutting_down);
  const down = new Set(inp.shutting_down);
  const inIsr = (r) => isr.includes(r);
  switch (strategy) {
    case "OfflinePartitionLeaderElectionStrategy": {
      const clean = firstOf(ar, (r) => online.has(r) && inIsr(r));
      if (clean !== -1) {
        return { leader: clean, isr: isr.filter((r) => online.has(r)), recipients: ar.filter((r) => online.has(r)), unclean: false };
      }
      const noLiveIsr = !isr.some((r) => online.has(r));
      const allowed = noLiveIsr && (inp.allow_unclean || inp.unclean_enabled);
      const leader = allowed ? firstOf(ar, (r) => online.has(r)) : -1;
      return { leader, isr: leader === -1 ? isr : [leader], recipients: ar.filter((r) => online.has(r)), unclean: leader !== -1 };
    }
    case "ReassignPartitionLeaderElectionStrategy": {
      const targets = inp.target_replicas;
      return { leader: firstOf(targets, (r) => online.has(r) && inIsr(r)), isr, recipients: targets, unclean: false };
    }
    case "PreferredReplicaPartitionLeaderElectionStrategy": {
      const head = ar.length ? ar[0] : -1;
      const ok = head !== -1 && online.has(head) && inIsr(head);
      return { leader: ok ? head : -1, isr, recipients: ar, unclean: false };
    }
    case "ControlledShutdownPartitionLeaderElectionStrategy": {
      const leader = firstOf(ar, (r) => reachable.has(r) && inIsr(r) && !down.has(r));
      // KAFKA-7482: 2.8 also tells the shutting-down broker; 1.1 only the online replicas.
      const to = profile === "kafka-1.1" ? online : reachable;
      return { leader, isr: isr.filter((r) => !down.has(r)), recipients: ar.filter((r) => to.has(r)), unclean: false };
    }
    default:
      return null;
  }
}

function handle(req) {
  switch (req.type) {
    case "hello":
      profile = req.profile;
      return {
        type: "hello",
        protocol_version: 1,
        implementation: { name: "node-example", version: "1.0.0" },
        profiles: PROFILES,
        capabilities: CAPABILITIES,
      };
    case "elect": {
      const result = elect(req.strategy, req.input);
      if (result === null) return { type: "error", code: "invalid_input", message: `unknown strategy ${req.strategy}` };
      return { type: "election", result };
    }
    case "shutdown":
      return { type: "ok" };
    default:
      return { type: "error", code: "unsupported", message: `node-example does not implement ${req.type}` };
  }
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  if (!line.trim()) return;
  let req;
  try {
    req = JSON.parse(line);
  } catch (e) {
    process.stdout.write(JSON.stringify({ id: -1, type: "error", code: "invalid_input", message: String(e) }) + "\n");
    return;
  }
  const reply = handle(req);
  process.stdout.write(JSON.stringify({ id: req.id, ...reply }) + "\n");
  if (req.type === "shutdown") {
    rl.close();
  }
});
