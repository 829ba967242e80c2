#!/usr/bin/env node
// An example kcspec conformance SUT for Node.js (plain JavaScript, no dependencies).
// It speaks protocol v1 (JSON lines on stdin/stdout) and implements the four leader-election
// strategies of the semantics document (§6), the replica state machine (§2.1, §2.3, §4, with the
// request batch of §3.4 and the ZooKeeper faults of §3.3; see replica_machine.js) and the partition state
// machine (§5, with leader initialisation and elections in context; see partition_machine.js), for both
// profiles, and for kafka-2.8 every controller event (§7, §8, §9; see events.js and controller.js) including the
// controller's event queue (protocol 1.3, capability "callbacks") and the controller's gauges (protocol 1.2,
// capability "metrics": each event's step reply carries them, see metrics below), so it declares every capability
// there; for kafka-1.1 it answers events "unsupported" and declares neither.
// Run it with:
//   kcspec conformance run --sut "node conformance/examples/node/sut.js" --level controller
"use strict";

const { replicaStateChange, topicOf, withDefaults } = require("./replica_machine.js");
const { partitionStateChange } = require("./partition_machine.js");
const { controllerEvent, NotEnabled } = require("./events.js");

const CAPABILITIES = ["elections", "replica_state_machine", "partition_state_machine", "fault_injection"];
// Whole controller events, and with them the controller's event queue (protocol 1.3: requests with a callback
// wait in controller.queued_elections and step replies carry their `answers`), are implemented for kafka-2.8 only
// (events.js).
const EVENT_CAPABILITIES = ["controller_events", "callbacks", "metrics"];
const EVENT_PROFILES = ["kafka-2.8"];
const PROFILES = ["kafka-2.8", "kafka-1.1"];
let profile = "kafka-2.8";
let state = null; // the loaded ClusterState (canonical JSON form), advanced by every state-machine call

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

// §3.1 (2.8.2, the gauges kafka.controller:type=KafkaController keeps): the controller's OfflinePartitionsCount and
// PreferredReplicaImbalanceCount after an event. Kafka keeps them as counters updated where partition states,
// leadership and assignments change; this SUT counts them from its context after each event instead, which gives
// the value the counters hold:
// * offline: partitions in OfflinePartition, unless their topic's deletion has started (a partition state put
//   while deletion is in progress leaves the counter as it was);
// * imbalance: partitions with cached leadership and a non-empty assignment, of topics not queued for deletion,
//   whose leader is not the preferred replica (the head of the assignment); while the preferred replica is being
//   added by a reassignment, the partition counts as imbalanced iff that replica is already in the ISR.
function metrics(ctx) {
  let offline = 0;
  for (const [tp, st] of Object.entries(ctx.partition_states)) {
    if (st === "OfflinePartition" && !ctx.topics_with_deletion_started.includes(topicOf(tp))) offline += 1;
  }
  let imbalance = 0;
  for (const [tp, li] of Object.entries(ctx.leadership)) {
    const fa = ctx.assignments[tp];
    if (ctx.topics_to_be_deleted.includes(topicOf(tp)) || fa === undefined || fa.replicas.length === 0) continue;
    const preferred = fa.replicas[0];
    const imbalanced = fa.adding.includes(preferred)
      ? li.leader_and_isr.isr.includes(preferred)
      : li.leader_and_isr.leader !== preferred;
    if (imbalanced) imbalance += 1;
  }
  return { offline_partition_count: offline, preferred_replica_imbalance_count: imbalance };
}

// Protocol 1.1: each request carries its place among the requests to its broker, in send order (§3.4: one
// queue per broker; each batch sends LeaderAndIsr, then UpdateMetadata, then StopReplica).
function withPositions(step) {
  const next = new Map();
  const requests = step.requests.map((r) => {
    const position = next.get(r.broker) || 0;
    next.set(r.broker, position + 1);
    return { ...r, position };
  });
  return { type: "step", ...step, requests };
}

function handle(req) {
  switch (req.type) {
    case "hello":
      if (!PROFILES.includes(req.profile)) {
        return { type: "error", code: "unsupported", message: `unknown profile ${req.profile}` };
      }
      profile = req.profile;
      return {
        type: "hello",
        protocol_version: 1,
        protocol_minor: 3,
        implementation: { name: "node-example", version: "2.0.0" },
        profiles: PROFILES,
        capabilities: EVENT_PROFILES.includes(profile) ? CAPABILITIES.concat(EVENT_CAPABILITIES) : CAPABILITIES,
      };
    case "load":
      state = withDefaults(req.state);
      return { type: "ok" };
    case "elect": {
      const result = elect(req.strategy, req.input);
      if (result === null) return { type: "error", code: "invalid_input", message: `unknown strategy ${req.strategy}` };
      return { type: "election", result };
    }
    case "replica_state_change": {
      if (state === null) return { type: "error", code: "no_state", message: "no state loaded" };
      let step;
      try {
        step = replicaStateChange(state, profile, req.replicas, req.target);
      } catch (e) {
        if (e instanceof RangeError) return { type: "error", code: "invalid_input", message: e.message };
        throw e;
      }
      state = step.state;
      return withPositions(step);
    }
    case "partition_state_change": {
      if (state === null) return { type: "error", code: "no_state", message: "no state loaded" };
      let step;
      try {
        step = partitionStateChange(state, profile, req.partitions, req.target, req.election);
      } catch (e) {
        if (e instanceof RangeError) return { type: "error", code: "invalid_input", message: e.message };
        throw e;
      }
      state = step.state;
      return withPositions(step);
    }
    case "event": {
      if (!EVENT_PROFILES.includes(profile)) {
        return { type: "error", code: "unsupported", message: `node-example implements events for ${EVENT_PROFILES} only` };
      }
      if (state === null) return { type: "error", code: "no_state", message: "no state loaded" };
      let step;
      try {
        step = controllerEvent(state, profile, req.event);
      } catch (e) {
        if (e instanceof NotEnabled) return { type: "error", code: "not_enabled", message: e.message };
        if (e instanceof RangeError) return { type: "error", code: "invalid_input", message: e.message };
        throw e;
      }
      state = step.state;
      return { ...withPositions(step), metrics: metrics(state.controller) };
    }
    case "snapshot":
      if (state === null) return { type: "error", code: "no_state", message: "no state loaded" };
      return { type: "state", state };
    case "shutdown":
      return { type: "ok" };
    default:
      return { type: "error", code: "unsupported", message: `node-example does not implement ${req.type}` };
  }
}

// The reply to one request line, and whether the line asked to shut down.
function answer(line) {
  let req;
  try {
    req = JSON.parse(line);
  } catch (e) {
    return [{ id: -1, type: "error", code: "invalid_input", message: String(e) }, false];
  }
  const id = req !== null && Number.isInteger(req.id) ? req.id : -1;
  try {
    return [{ id, ...handle(req) }, req.type === "shutdown"];
  } catch (e) {
    process.stderr.write(`error while handling request ${id}: ${e && e.stack ? e.stack : e}\n`);
    return [{ id, type: "error", code: "internal", message: String(e) }, false];
  }
}

// Input is split into lines by hand (no readline); the replies to the lines of one input chunk go out in one
// write. End of input or shutdown ends the process.
let pending = "";
let done = false;
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  if (done) return;
  pending += chunk;
  let out = "";
  let start = 0;
  let nl;
  while (!done && (nl = pending.indexOf("\n", start)) >= 0) {
    const line = pending.slice(start, nl);
    start = nl + 1;
    if (!line.trim()) continue;
    const [reply, shutdown] = answer(line);
    out += JSON.stringify(reply) + "\n";
    done = shutdown;
  }
  pending = pending.slice(start);
  if (out) process.stdout.write(out);
  if (done) process.stdin.destroy();
});
