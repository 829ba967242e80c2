// The partition state machine of the Node.js example SUT (plain JavaScript, no dependencies).
//
// One `partitionStateChange(state, profile, partitions, target, election)` call is one Kafka
// `PartitionStateMachine.handleStateChanges(partitions, target, strategy)` call (semantics §2.3, §5): implicit
// NonExistentPartition entries, the valid-previous-state table of §2.1, leader and ISR initialisation of new
// partitions (§5.2a: one conditional create per partition, NODEEXISTS when the znode is there), leader
// elections with the four strategies of §6 and the conditional ZooKeeper update of §3.3 (BADVERSION and
// CONNECTIONLOSS one-shot faults, retries), the request batch of §3.4 and a final sendRequestsToBrokers. It
// reuses the replica machine's context helpers, request batch and ZooKeeper update (replica_machine.js).
//
// [1.1] differences: no /controller_epoch CheckOp (no fencing); a retry after BADVERSION re-elects the whole
// original list (fixed by KIP-460 in 2.4); an unclean election is decided by the topic config only; the
// Reassign strategy reads the legacy reassignment (RAR) and fails the whole call when a partition has none;
// the ControlledShutdown strategy leaves shutting-down brokers out of the recipients (KAFKA-7482).
"use strict";

const { Call, ControllerMoved, BEHAVIOUR, topicOf } = require("./replica_machine.js");

const NEW = "NewPartition";
const ONLINE = "OnlinePartition";
const OFFLINE = "OfflinePartition";
const NON_EXISTENT = "NonExistentPartition";
const PARTITION_STATES = [NEW, ONLINE, OFFLINE, NON_EXISTENT];
const VALID_PREVIOUS = {
  [NEW]: [NON_EXISTENT],
  [ONLINE]: [NEW, ONLINE, OFFLINE],
  [OFFLINE]: [NEW, ONLINE, OFFLINE],
  [NON_EXISTENT]: [OFFLINE],
};
const STRATEGIES = [
  "OfflinePartitionLeaderElectionStrategy",
  "ReassignPartitionLeaderElectionStrategy",
  "PreferredReplicaPartitionLeaderElectionStrategy",
  "ControlledShutdownPartitionLeaderElectionStrategy",
];

// An error that ends the whole call: queued requests are dropped, what was done stays (Kafka logs and
// returns the error for every partition).
class CallFailed extends Error {}

class PartitionCall extends Call {
  constructor(state, behaviour, modern) {
    super(state, behaviour);
    this.modern = modern; // 2.4+ behaviour (kafka-2.8)
  }

  partitionState(tp) {
    return this.ctx.partition_states[tp] || NON_EXISTENT;
  }

  failPartition(tp, fromState, target, reason) {
    const failure = { machine: "partition", tp, replica: -1, from_state: fromState, target, reason };
    this.failures.set(JSON.stringify(failure), failure);
  }

  liveIds() {
    const down = new Set(this.ctx.shutting_down);
    return new Set(this.liveOrShuttingDown().filter((b) => !down.has(b)));
  }

  onlineIncludingShuttingDown(r, tp) {
    const c = this.ctx;
    return (
      Object.prototype.hasOwnProperty.call(c.live_brokers, String(r)) &&
      !c.offline_replicas.includes(`${tp}/${r}`)
    );
  }

  config() {
    return { unclean_leader_election_enable: false, unclean_topics: [], ...(this.s.config || {}) };
  }

  clearBatch() {
    this.lair = new Map();
    this.umrBrokers = new Set();
    this.umrPartitions = new Map();
    this.stopReplica = new Map();
  }

  // §2.3: one whole handleStateChanges call.
  handleStateChanges(partitions, target, election) {
    const unique = Array.from(new Set(partitions));
    if (unique.length === 0) return;
    try {
      this.doHandleStateChanges(unique, target, election);
      this.send();
    } catch (e) {
      this.clearBatch();
      if (!(e instanceof CallFailed)) throw e;
    }
  }

  doHandleStateChanges(partitions, target, election) {
    const valid = [];
    const currents = [];
    for (const tp of partitions) {
      if (this.ctx.partition_states[tp] === undefined) this.ctx.partition_states[tp] = NON_EXISTENT;
      const current = this.partitionState(tp);
      if (VALID_PREVIOUS[target].includes(current)) {
        valid.push(tp);
        currents.push(current);
      } else {
        this.failPartition(tp, current, target, "InvalidTransition");
      }
    }
    if (target === NEW) {
      for (const tp of valid) this.ctx.partition_states[tp] = NEW;
      return;
    }
    if (target !== ONLINE) {
      for (const tp of valid) this.ctx.partition_states[tp] = target;
      return;
    }
    const uninitialized = valid.filter((_, i) => currents[i] === NEW);
    const toElect = valid.filter((_, i) => currents[i] !== NEW);
    if (uninitialized.length > 0) {
      for (const tp of this.initializeLeaderAndIsr(uninitialized)) this.ctx.partition_states[tp] = ONLINE;
    }
    if (toElect.length === 0) return;
    if (election === null || election === undefined) {
      throw new CallFailed("Election strategy is a required field when the target state is OnlinePartition");
    }
    for (const tp of this.electLeaders(toElect, election)) this.ctx.partition_states[tp] = ONLINE;
  }

  // §5.2a: leader = first live assigned replica, ISR = the live assigned replicas, one create per partition.
  initializeLeaderAndIsr(partitions) {
    const records = new Map();
    for (const tp of partitions) {
      const live = this.assignment(tp).replicas.filter((r) => this.isOnline(r, tp));
      if (live.length === 0) {
        this.failPartition(tp, NEW, ONLINE, "NoAssignedReplicaAlive");
        continue;
      }
      records.set(tp, {
        leader_and_isr: { leader: live[0], leader_epoch: 0, isr: live, zk_version: 0 },
        controller_epoch: this.ctx.epoch,
      });
    }
    if (records.size === 0) return [];
    const zk = this.s.zk;
    // a CONNECTIONLOSS on one of the paths: the whole create throws before reaching ZooKeeper (§5.2a step 4);
    // every partition of the call is logged as failed with target NewPartition, none is initialised
    const lost = Array.from(records.keys()).filter((tp) => this.fault(tp) === "CONNECTIONLOSS");
    if (lost.length > 0) {
      for (const tp of lost) delete zk.faults[tp];
      for (const tp of records.keys()) this.failPartition(tp, this.partitionState(tp), NEW, "ZkError");
      return [];
    }
    if (this.b.fencing && zk.controller_epoch_zk_version !== this.ctx.epoch_zk_version) {
      throw new ControllerMoved("the /controller_epoch CheckOp failed");
    }
    const succeeded = [];
    for (const [tp, li] of records) {
      if (zk.partition_states[tp] !== undefined) {
        this.failPartition(tp, NEW, ONLINE, "NodeExists");
        continue;
      }
      zk.partition_states[tp] = structuredClone(li);
      this.ctx.leadership[tp] = structuredClone(li);
      succeeded.push(tp);
    }
    for (const tp of succeeded) {
      const keys = records.get(tp).leader_and_isr.isr.map((r) => [tp, r]);
      this.addLeaderAndIsr(keys, [tp], true);
    }
    return succeeded;
  }

  // §5.2b: elect, write conditionally, retry what the write could not do; returns the elected partitions.
  electLeaders(partitions, election) {
    const elected = new Set();
    let remaining = partitions;
    while (remaining.length > 0) {
      const round = this.electRound(this.modern ? remaining : partitions, election);
      for (const [tp, reason] of round.failed) this.failPartition(tp, this.partitionState(tp), ONLINE, reason);
      for (const tp of round.written) elected.add(tp);
      // the call's results (Kafka's map partition -> Either[Throwable, LeaderAndIsr]), which an admin election's
      // callback answers: the failure's reason or the elected leader
      if (this.electionResults) {
        for (const [tp, reason] of round.failed) this.electionResults.set(tp, { reason });
        for (const tp of round.written) this.electionResults.set(tp, { leader: this.ctx.leadership[tp].leader_and_isr.leader });
      }
      remaining = round.retry;
    }
    return Array.from(elected);
  }

  electRound(partitions, election) {
    const zk = this.s.zk;
    const failed = [];
    const lost = partitions.filter((tp) => this.fault(tp) === "CONNECTIONLOSS");
    if (lost.length > 0) {
      for (const tp of lost) delete zk.faults[tp];
      return { written: [], retry: [], failed: partitions.map((tp) => [tp, "ZkError"]) };
    }
    const valid = [];
    for (const tp of partitions) {
      const znode = zk.partition_states[tp];
      if (znode === undefined) failed.push([tp, "LeaderAndIsrMissing"]);
      else if (znode.controller_epoch > this.ctx.epoch) failed.push([tp, "WrittenByNewerController"]);
      else valid.push([tp, znode.leader_and_isr]);
    }
    if (valid.length === 0) return { written: [], retry: [], failed };
    const updates = {};
    const recipients = {};
    for (const [tp, lai] of valid) {
      const outcome = this.electOne(tp, lai, election);
      if (outcome.lai === null) {
        failed.push([tp, "NoEligibleLeader"]);
      } else {
        updates[tp] = outcome.lai;
        recipients[tp] = outcome.recipients;
      }
    }
    const result = this.updateLeaderAndIsr(updates);
    for (const tp of result.failed) failed.push([tp, "ZkError"]);
    for (const tp of result.written) {
      this.ctx.leadership[tp] = structuredClone(zk.partition_states[tp]);
    }
    const keys = [];
    for (const tp of result.written) for (const r of recipients[tp]) keys.push([tp, r]);
    this.addLeaderAndIsr(keys, result.written, false);
    return { written: result.written, retry: result.retry, failed };
  }

  // §6 on one partition in the controller's context: the new LeaderAndIsr (leader epoch + 1, the read zk
  // version as the expected one) or null, and the LeaderAndIsr recipients.
  electOne(tp, lai, election) {
    const ar = this.assignment(tp).replicas;
    const bump = (leader, isr) => ({ leader, leader_epoch: lai.leader_epoch + 1, isr, zk_version: lai.zk_version });
    const first = (list, pred) => {
      for (const r of list) if (pred(r)) return r;
      return -1;
    };
    const inIsr = (r) => lai.isr.includes(r);
    switch (election.strategy) {
      case "OfflinePartitionLeaderElectionStrategy": {
        const offlineDirs = this.ctx.offline_replicas.length > 0;
        const up = this.liveIds();
        const online = (r) => (offlineDirs ? this.isOnline(r, tp) : up.has(r));
        let unclean = false;
        if (!lai.isr.some(online)) {
          const cfg = this.config();
          unclean =
            (election.allow_unclean && this.modern) ||
            cfg.unclean_leader_election_enable ||
            cfg.unclean_topics.includes(topicOf(tp));
        }
        const live = ar.filter(online);
        let leader = first(ar, (r) => live.includes(r) && inIsr(r));
        if (leader === -1 && unclean) leader = first(ar, (r) => live.includes(r));
        if (leader === -1) return { lai: null, recipients: live };
        if (inIsr(leader)) return { lai: bump(leader, lai.isr.filter((r) => this.isOnline(r, tp))), recipients: live };
        return { lai: bump(leader, [leader]), recipients: live };
      }
      case "ReassignPartitionLeaderElectionStrategy": {
        let targets;
        if (this.modern) {
          const fa = this.assignment(tp);
          targets = fa.replicas.filter((r) => !fa.removing.includes(r));
        } else {
          targets = this.ctx.legacy_reassignments[tp];
          if (targets === undefined) throw new CallFailed(`key not found: ${tp}`);
        }
        const leader = first(targets, (r) => this.isOnline(r, tp) && inIsr(r));
        return { lai: leader === -1 ? null : bump(leader, lai.isr), recipients: targets };
      }
      case "PreferredReplicaPartitionLeaderElectionStrategy": {
        const head = ar.length > 0 ? ar[0] : -1;
        const ok = head !== -1 && this.isOnline(head, tp) && inIsr(head);
        return { lai: ok ? bump(head, lai.isr) : null, recipients: ar };
      }
      case "ControlledShutdownPartitionLeaderElectionStrategy": {
        const down = this.ctx.shutting_down;
        const live = ar.filter((r) => (this.modern ? this.onlineIncludingShuttingDown(r, tp) : this.isOnline(r, tp)));
        const leader = first(ar, (r) => live.includes(r) && inIsr(r) && !down.includes(r));
        if (leader === -1) return { lai: null, recipients: live };
        return { lai: bump(leader, lai.isr.filter((r) => !down.includes(r))), recipients: live };
      }
      default:
        throw new RangeError(`unknown election strategy ${election.strategy}`);
    }
  }
}

// One handleStateChanges(partitions, target, election) on a copy of `state`; returns the step reply body.
function partitionStateChange(state, profile, partitions, target, election) {
  const behaviour = BEHAVIOUR[profile];
  if (behaviour === undefined) throw new RangeError(`unknown profile ${profile}`);
  if (!PARTITION_STATES.includes(target)) throw new RangeError(`unknown partition state ${target}`);
  if (election && !STRATEGIES.includes(election.strategy)) {
    throw new RangeError(`unknown election strategy ${election.strategy}`);
  }
  const call = new PartitionCall(structuredClone(state), behaviour, profile === "kafka-2.8");
  try {
    call.handleStateChanges(partitions, target, election);
  } catch (e) {
    // §2.3 step 7 (2.8): ControllerMovedException ends the call; nothing queued is sent.
    if (!(e instanceof ControllerMoved)) throw e;
  }
  const results = {};
  for (const tp of partitions) results[tp] = call.partitionState(tp);
  return {
    state: call.s,
    requests: call.sent,
    failures: Array.from(call.failures.values()),
    results,
  };
}

module.exports = { partitionStateChange, PARTITION_STATES, PartitionCall };
