// The replica state machine of the Node.js example SUT (plain JavaScript, no dependencies).
//
// One `replicaStateChange(state, profile, replicas, target)` call is one Kafka
// `ReplicaStateMachine.handleStateChanges(replicas, target)` call (semantics §2.3, §4): implicit
// NonExistentReplica entries, the valid-previous-state tables of §2.1 per profile, the per-target rules of
// §4.1–§4.7 (with the ZooKeeper ISR removal of §4.3 and its one-shot faults, §3.3), the request batch of §3.4
// and a final sendRequestsToBrokers. The state is the canonical JSON form of a ClusterState (maps are
// objects keyed by "t-0" / "t-0/1" / "1", sets are arrays); the call works on its own copy and returns it.
//
// Ordering decision shared with the spec: OnlineReplica and OfflineReplica are processed broker by broker in
// ascending broker id (Kafka uses hash order, ARCHITECTURE.md).
"use strict";

const NO_LEADER = -1;
const LEADER_DURING_DELETE = -2;
const EPOCH_DURING_DELETE = -2;
const NO_EPOCH = -1;

const NEW = "NewReplica";
const ONLINE = "OnlineReplica";
const OFFLINE = "OfflineReplica";
const STARTED = "ReplicaDeletionStarted";
const SUCCESSFUL = "ReplicaDeletionSuccessful";
const INELIGIBLE = "ReplicaDeletionIneligible";
const NON_EXISTENT = "NonExistentReplica";
const REPLICA_STATES = [NEW, ONLINE, OFFLINE, STARTED, SUCCESSFUL, INELIGIBLE, NON_EXISTENT];

// §2.1: valid previous states, per profile (they differ only for ReplicaDeletionIneligible, KAFKA-8237).
function validPrevious(is28) {
  return {
    [NEW]: [NON_EXISTENT],
    [ONLINE]: [NEW, ONLINE, OFFLINE, INELIGIBLE],
    [OFFLINE]: [NEW, ONLINE, OFFLINE, INELIGIBLE],
    [STARTED]: [OFFLINE],
    [SUCCESSFUL]: [STARTED],
    [INELIGIBLE]: is28 ? [OFFLINE, STARTED] : [STARTED],
    [NON_EXISTENT]: [SUCCESSFUL],
  };
}

// The inter.broker.protocol.version values of the protocol, oldest first.
const IBP_ORDER = ["KAFKA_2_6_IV0", "KAFKA_2_7_IV0", "KAFKA_2_7_IV2", "KAFKA_2_8_IV0", "KAFKA_2_8_IV1"];

// The [1.1] differences of §3.3, §3.4 and §4.3 that this machine needs.
const BEHAVIOUR = {
  "kafka-2.8": {
    valid: validPrevious(true),
    fencing: true, // §3.3 CheckOp on /controller_epoch (KAFKA-6082)
    offlineWithoutLeadership: true, // §4.3 step 5 (KAFKA-6650, KAFKA-3143)
    stopReplicaLeaderEpoch: true, // §3.4 KIP-570
    umrEmptyMeansAll: false, // §3.4
    umrCarriesDeleting: false, // §3.4 [1.1]
    topicIds: true, // KIP-516, as the inter-broker protocol allows
  },
  "kafka-1.1": {
    valid: validPrevious(false),
    fencing: false,
    offlineWithoutLeadership: false,
    stopReplicaLeaderEpoch: false,
    umrEmptyMeansAll: true,
    umrCarriesDeleting: true,
    topicIds: false,
  },
};

class ControllerMoved extends Error {}

const hasKey = (obj, key) => Object.prototype.hasOwnProperty.call(obj, String(key));

// ---------------------------------------------------------------------------------------------- names

function splitReplica(text) {
  const i = text.lastIndexOf("/");
  return [text.slice(0, i), Number(text.slice(i + 1))];
}

function topicOf(tp) {
  return tp.slice(0, tp.lastIndexOf("-"));
}

function replicaKey(tp, broker) {
  return `${tp}/${broker}`;
}

// ---------------------------------------------------------------------------------------------- one call

class Call {
  constructor(state, behaviour) {
    this.s = state;
    this.b = behaviour;
    this.lair = new Map(); // "tp/broker" -> {broker, state}
    this.umrBrokers = new Set();
    this.umrPartitions = new Map(); // tp -> state
    this.stopReplica = new Map(); // "tp/broker" -> {broker, state}
    this.sent = [];
    this.failures = new Map(); // JSON text -> failure (a set)
  }

  // --- ControllerContext helpers (§3.1) ----------------------------------------------------------------

  get ctx() {
    return this.s.controller;
  }

  // The inter-broker protocol: 2.7-IV0 and later enable feature versioning (KIP-584), 2.7-IV2 and later send ISR
  // changes as AlterIsr (KIP-497), 2.8-IV0 and later create topic IDs, 2.8-IV1 sends them in requests (KIP-516).
  ibp() {
    return (this.s.config || {}).inter_broker_protocol || "KAFKA_2_8_IV1";
  }

  ibpAtLeast(version) {
    return IBP_ORDER.indexOf(this.ibp()) >= IBP_ORDER.indexOf(version);
  }

  usesTopicId() {
    return this.b.topicIds && this.ibpAtLeast("KAFKA_2_8_IV0");
  }

  // LeaderAndIsr v5 / UpdateMetadata v7: every topic of the states -> its ID (0: the zero UUID); none before.
  requestTopicIds(states) {
    const out = {};
    if (!this.b.topicIds || this.ibp() !== "KAFKA_2_8_IV1") return out;
    const ids = this.ctx.topic_ids || {};
    for (const t of states.map((st) => topicOf(st.tp)).sort()) out[t] = hasKey(ids, t) ? ids[t] : 0;
    return out;
  }

  liveOrShuttingDown() {
    return Object.keys(this.ctx.live_brokers).map(Number);
  }

  isOnline(r, tp) {
    const c = this.ctx;
    return (
      Object.prototype.hasOwnProperty.call(c.live_brokers, String(r)) &&
      !c.shutting_down.includes(r) &&
      !c.offline_replicas.includes(replicaKey(tp, r))
    );
  }

  assignment(tp) {
    return this.ctx.assignments[tp] || { replicas: [], adding: [], removing: [] };
  }

  leadership(tp) {
    return this.ctx.leadership[tp];
  }

  queuedForDeletion(topic) {
    return this.ctx.topics_to_be_deleted.includes(topic);
  }

  replicaState(pr) {
    return this.ctx.replica_states[pr] || NON_EXISTENT;
  }

  setReplicaState(pr, state) {
    this.ctx.replica_states[pr] = state;
  }

  fail(tp, replica, fromState, target, reason) {
    const failure = { machine: "replica", tp, replica, from_state: fromState, target, reason };
    this.failures.set(JSON.stringify(failure), failure);
  }

  // --- the request batch (§3.4) ----------------------------------------------------------------------

  // addLeaderAndIsrRequestForBrokers for every (tp, broker) of `keys`, then the implicit UMR of `tps`.
  addLeaderAndIsr(keys, tps, isNew) {
    if (tps.length === 0) return;
    for (const [tp, broker] of keys) {
      if (broker < 0) continue;
      const li = this.leadership(tp);
      const fa = this.assignment(tp);
      const key = replicaKey(tp, broker);
      const existing = this.lair.get(key);
      this.lair.set(key, {
        broker,
        state: {
          tp,
          controller_epoch: li.controller_epoch,
          leader: li.leader_and_isr.leader,
          leader_epoch: li.leader_and_isr.leader_epoch,
          isr: li.leader_and_isr.isr.slice(),
          zk_version: li.leader_and_isr.zk_version,
          replicas: fa.replicas.slice(),
          adding: fa.adding.slice(),
          removing: fa.removing.slice(),
          is_new: isNew || (existing !== undefined && existing.state.is_new),
        },
      });
    }
    this.addUpdateMetadata(this.liveOrShuttingDown(), tps);
  }

  // addUpdateMetadataRequestForBrokers: recipients, and partition states computed now.
  addUpdateMetadata(brokers, tps) {
    for (const b of brokers) if (b >= 0) this.umrBrokers.add(b);
    let parts = tps;
    if (this.b.umrEmptyMeansAll && tps.length === 0) parts = Object.keys(this.ctx.leadership);
    if (this.b.umrCarriesDeleting) {
      const deleting = Object.keys(this.ctx.assignments).filter((tp) => this.queuedForDeletion(topicOf(tp)));
      parts = parts.concat(deleting);
    }
    for (const tp of parts) {
      const li = this.leadership(tp);
      if (li === undefined) continue;
      const ar = this.assignment(tp).replicas;
      const deleting = this.queuedForDeletion(topicOf(tp));
      const lai = li.leader_and_isr;
      this.umrPartitions.set(tp, {
        tp,
        controller_epoch: li.controller_epoch,
        leader: deleting ? LEADER_DURING_DELETE : lai.leader,
        leader_epoch: deleting ? 0 : lai.leader_epoch,
        isr: lai.isr.slice(),
        zk_version: deleting ? 0 : lai.zk_version,
        replicas: ar.slice(),
        offline_replicas: ar.filter((r) => !this.isOnline(r, tp)),
      });
    }
  }

  stopReplicaLeaderEpoch(tp) {
    if (!this.b.stopReplicaLeaderEpoch) return NO_EPOCH;
    if (this.queuedForDeletion(topicOf(tp))) return EPOCH_DURING_DELETE;
    const li = this.leadership(tp);
    return li === undefined ? NO_EPOCH : li.leader_and_isr.leader_epoch;
  }

  // addStopReplicaRequestForBrokers([broker], tp, delete) for every (tp, broker); deletePartition is sticky.
  addStopReplica(keys, del) {
    for (const [tp, broker] of keys) {
      if (broker < 0) continue;
      const key = replicaKey(tp, broker);
      const existing = this.stopReplica.get(key);
      this.stopReplica.set(key, {
        broker,
        state: {
          tp,
          delete_partition: del || (existing !== undefined && existing.state.delete_partition),
          leader_epoch: this.stopReplicaLeaderEpoch(tp),
        },
      });
    }
  }

  // sendRequestsToBrokers: one request of each kind per recipient; brokers not live-or-shutting-down dropped.
  send() {
    const live = new Set(this.liveOrShuttingDown());
    const header = (broker) => ({
      broker,
      controller_id: this.ctx.controller_id,
      controller_epoch: this.ctx.epoch,
    });
    const perBroker = (entries) => {
      const out = new Map();
      for (const { broker, state } of entries.values()) {
        if (!live.has(broker)) continue;
        if (!out.has(broker)) out.set(broker, []);
        out.get(broker).push(state);
      }
      return out;
    };
    for (const [broker, states] of perBroker(this.lair)) {
      this.sent.push({
        type: "LeaderAndIsr",
        ...header(broker),
        partition_states: states,
        topic_ids: this.requestTopicIds(states),
      });
    }
    const umrStates = Array.from(this.umrPartitions.values());
    const liveList = Array.from(live).sort((a, b) => a - b);
    for (const broker of this.umrBrokers) {
      if (!live.has(broker)) continue;
      this.sent.push({
        type: "UpdateMetadata",
        ...header(broker),
        live_brokers: liveList,
        partition_states: umrStates,
        topic_ids: this.requestTopicIds(umrStates),
      });
    }
    for (const [broker, states] of perBroker(this.stopReplica)) {
      this.sent.push({ type: "StopReplica", ...header(broker), partition_states: states });
    }
    this.lair = new Map();
    this.umrBrokers = new Set();
    this.umrPartitions = new Map();
    this.stopReplica = new Map();
  }

  // --- ZooKeeper (§3.3) --------------------------------------------------------------------------------

  fault(tp) {
    return this.s.zk.faults[tp];
  }

  // updateLeaderAndIsr: `updates` maps tp -> LeaderAndIsr whose zk_version is the expected version.
  updateLeaderAndIsr(updates) {
    const result = { written: [], retry: [], failed: [] };
    const tps = Object.keys(updates);
    if (tps.length === 0) return result;
    const zk = this.s.zk;
    if (this.b.fencing && zk.controller_epoch_zk_version !== this.ctx.epoch_zk_version) {
      throw new ControllerMoved("the /controller_epoch CheckOp failed");
    }
    for (const tp of tps) {
      const znode = zk.partition_states[tp];
      if (znode === undefined) {
        result.failed.push(tp);
        continue;
      }
      const wanted = updates[tp];
      if (this.fault(tp) === "BADVERSION" || znode.leader_and_isr.zk_version !== wanted.zk_version) {
        if (this.fault(tp) === "BADVERSION") delete zk.faults[tp];
        result.retry.push(tp);
        continue;
      }
      zk.partition_states[tp] = {
        leader_and_isr: { ...wanted, isr: wanted.isr.slice(), zk_version: znode.leader_and_isr.zk_version + 1 },
        controller_epoch: this.ctx.epoch,
      };
      result.written.push(tp);
    }
    return result;
  }

  // --- §4.3 removeReplicasFromIsr ----------------------------------------------------------------------

  // One round of doRemoveReplicasFromIsr(broker, remaining): returns {done, retry}.
  removalRound(broker, remaining) {
    const zk = this.s.zk;
    const failAll = (tps, reason) => {
      for (const tp of tps) this.fail(tp, broker, this.replicaState(replicaKey(tp, broker)), OFFLINE, reason);
    };
    // (a) the read: a CONNECTIONLOSS on any znode fails every partition of the read (all such faults fire).
    const lost = remaining.filter((tp) => this.fault(tp) === "CONNECTIONLOSS");
    if (lost.length > 0) {
      for (const tp of lost) delete zk.faults[tp];
      failAll(remaining, "ZkError");
      return { done: [], retry: [] };
    }
    const missing = remaining.filter((tp) => zk.partition_states[tp] === undefined);
    const present = remaining.filter((tp) => zk.partition_states[tp] !== undefined);
    const newer = present.filter((tp) => zk.partition_states[tp].controller_epoch > this.ctx.epoch);
    const candidates = present.filter((tp) => zk.partition_states[tp].controller_epoch <= this.ctx.epoch);
    // (b) rewrite the partitions whose ZK ISR holds the broker; (c) the others are taken as they are.
    const updates = {};
    const untouched = [];
    for (const tp of candidates) {
      const lai = zk.partition_states[tp].leader_and_isr;
      if (!lai.isr.includes(broker)) {
        untouched.push(tp);
        continue;
      }
      updates[tp] = {
        leader: lai.leader === broker ? NO_LEADER : lai.leader,
        leader_epoch: lai.leader_epoch + 1,
        isr: lai.isr.length === 1 ? lai.isr.slice() : lai.isr.filter((r) => r !== broker),
        zk_version: lai.zk_version,
      };
    }
    const written = this.updateLeaderAndIsr(updates);
    const done = written.written.concat(untouched);
    // (d) the cache takes the ZK value with the current controller epoch.
    for (const tp of done) {
      const lai = zk.partition_states[tp].leader_and_isr;
      this.ctx.leadership[tp] = {
        leader_and_isr: { ...lai, isr: lai.isr.slice() },
        controller_epoch: this.ctx.epoch,
      };
    }
    // (e) failures: an empty path (unless the topic is queued for deletion: silently dropped), a newer
    // controller's write, a vanished znode.
    failAll(
      missing.filter((tp) => !this.queuedForDeletion(topicOf(tp))),
      "LeaderAndIsrPathEmpty",
    );
    failAll(newer, "WrittenByNewerController");
    failAll(written.failed, "ZkError");
    return { done, retry: written.retry };
  }

  // --- per-target rules (§4.1–§4.7) --------------------------------------------------------------------

  // §4.1: the current leader is refused (logged with target OfflineReplica); LAIR(isNew) to the replica.
  toNew(valid) {
    const keys = [];
    const tps = [];
    for (const pr of valid) {
      const [tp, r] = splitReplica(pr);
      const li = this.leadership(tp);
      if (li !== undefined && li.leader_and_isr.leader === r) {
        this.fail(tp, r, this.replicaState(pr), OFFLINE, "NewReplicaIsLeader");
        continue;
      }
      this.setReplicaState(pr, NEW);
      if (li !== undefined) {
        keys.push([tp, r]);
        tps.push(tp);
      }
    }
    this.addLeaderAndIsr(keys, tps, true);
  }

  // §4.2 for one broker: from NewReplica append the broker to AR if missing (no request); from any other
  // state LAIR(isNew = false) to the broker when LI is present.
  toOnline(broker, tps) {
    const keys = [];
    const lairTps = [];
    for (const tp of tps) {
      const pr = replicaKey(tp, broker);
      if (this.replicaState(pr) === NEW) {
        const fa = this.assignment(tp);
        if (!fa.replicas.includes(broker)) {
          this.ctx.assignments[tp] = {
            replicas: fa.replicas.concat([broker]),
            adding: fa.adding.slice(),
            removing: fa.removing.slice(),
          };
        }
      } else if (this.leadership(tp) !== undefined) {
        keys.push([tp, broker]);
        lairTps.push(tp);
      }
    }
    this.addLeaderAndIsr(keys, lairTps, false);
    for (const tp of tps) this.setReplicaState(replicaKey(tp, broker), ONLINE);
  }

  // §4.3 for one broker: SR(delete = false), ISR removal with retries, LAIR to the other replicas.
  toOffline(broker, tps) {
    this.addStopReplica(
      tps.map((tp) => [tp, broker]),
      false,
    );
    const withLeadership = tps.filter((tp) => this.leadership(tp) !== undefined);
    const withoutLeadership = tps.filter((tp) => this.leadership(tp) === undefined);
    let done = [];
    let remaining = withLeadership;
    while (remaining.length > 0) {
      const round = this.removalRound(broker, remaining);
      done = done.concat(round.done);
      remaining = round.retry;
    }
    const notDeleting = done.filter((tp) => !this.queuedForDeletion(topicOf(tp)));
    const keys = [];
    for (const tp of notDeleting) {
      for (const r of this.assignment(tp).replicas) if (r !== broker) keys.push([tp, r]);
    }
    this.addLeaderAndIsr(keys, notDeleting, false);
    for (const tp of done) this.setReplicaState(replicaKey(tp, broker), OFFLINE);
    if (this.b.offlineWithoutLeadership && withoutLeadership.length > 0) {
      for (const tp of withoutLeadership) this.setReplicaState(replicaKey(tp, broker), OFFLINE);
      this.addUpdateMetadata(this.liveOrShuttingDown(), withoutLeadership);
    }
  }

  // §4.4: RS := ReplicaDeletionStarted, then SR(delete = true) to the replica.
  toDeletionStarted(valid) {
    for (const pr of valid) this.setReplicaState(pr, STARTED);
    this.addStopReplica(valid.map(splitReplica), true);
  }

  // §4.7: the replica leaves FA(p) (replicas, adding, removing) and its state entry is removed.
  toNonExistent(valid) {
    for (const pr of valid) {
      const [tp, r] = splitReplica(pr);
      const fa = this.assignment(tp);
      this.ctx.assignments[tp] = {
        replicas: fa.replicas.filter((x) => x !== r),
        adding: fa.adding.filter((x) => x !== r),
        removing: fa.removing.filter((x) => x !== r),
      };
      delete this.ctx.replica_states[pr];
    }
  }

  byBroker(valid, fn) {
    const groups = new Map();
    for (const pr of valid) {
      const [tp, r] = splitReplica(pr);
      if (!groups.has(r)) groups.set(r, []);
      groups.get(r).push(tp);
    }
    for (const broker of Array.from(groups.keys()).sort((a, b) => a - b)) fn(broker, groups.get(broker));
  }

  // §2.3: one whole handleStateChanges call.
  handleStateChanges(replicas, target) {
    const unique = Array.from(new Set(replicas));
    if (unique.length === 0) return;
    for (const pr of unique) if (this.ctx.replica_states[pr] === undefined) this.setReplicaState(pr, NON_EXISTENT);
    const allowed = this.b.valid[target];
    const valid = [];
    for (const pr of unique) {
      const current = this.replicaState(pr);
      if (allowed.includes(current)) {
        valid.push(pr);
      } else {
        const [tp, r] = splitReplica(pr);
        this.fail(tp, r, current, target, "InvalidTransition");
      }
    }
    if (valid.length > 0) {
      switch (target) {
        case NEW:
          this.toNew(valid);
          break;
        case ONLINE:
          this.byBroker(valid, (broker, tps) => this.toOnline(broker, tps));
          break;
        case OFFLINE:
          this.byBroker(valid, (broker, tps) => this.toOffline(broker, tps));
          break;
        case STARTED:
          this.toDeletionStarted(valid);
          break;
        case NON_EXISTENT:
          this.toNonExistent(valid);
          break;
        default: // §4.5, §4.6: the state only
          for (const pr of valid) this.setReplicaState(pr, target);
      }
    }
    this.send();
  }
}

// The defaults of the canonical ClusterState, for states that leave fields out.
function withDefaults(state) {
  const zk = {
    controller: -1,
    controller_epoch: 0,
    controller_epoch_zk_version: 0,
    brokers: {},
    topics: [],
    topic_ids: {},
    assignments: {},
    partition_states: {},
    delete_topics: [],
    reassign_partitions: {},
    preferred_replica_election: [],
    isr_change_notifications: [],
    feature_znode: "Absent",
    feature_znode_zk_version: 0,
    faults: {},
    zxid: 1,
    ...(state.zk || {}),
  };
  const controller = {
    controller_id: -1,
    epoch: 0,
    epoch_zk_version: 0,
    live_brokers: {},
    shutting_down: [],
    offline_replicas: [],
    all_topics: [],
    topic_ids: {},
    assignments: {},
    leadership: {},
    partitions_being_reassigned: [],
    legacy_reassignments: {},
    replica_states: {},
    partition_states: {},
    topics_to_be_deleted: [],
    topics_with_deletion_started: [],
    topics_ineligible_for_deletion: [],
    queued_elections: [],
    ...(state.controller || {}),
  };
  for (const [tp, fa] of Object.entries(controller.assignments)) {
    controller.assignments[tp] = { adding: [], removing: [], ...fa };
  }
  return { ...state, zk, controller };
}

// One handleStateChanges(replicas, target) on a copy of `state`; returns the protocol's step reply body.
function replicaStateChange(state, profile, replicas, target) {
  const behaviour = BEHAVIOUR[profile];
  if (behaviour === undefined) throw new RangeError(`unknown profile ${profile}`);
  if (!REPLICA_STATES.includes(target)) throw new RangeError(`unknown replica state ${target}`);
  const call = new Call(structuredClone(state), behaviour);
  try {
    call.handleStateChanges(replicas, target);
  } catch (e) {
    // §2.3 step 7 (2.8): ControllerMovedException ends the call; nothing queued is sent.
    if (!(e instanceof ControllerMoved)) throw e;
  }
  const results = {};
  for (const pr of replicas) results[pr] = call.replicaState(pr);
  return {
    state: call.s,
    requests: call.sent,
    failures: Array.from(call.failures.values()),
    results,
  };
}

module.exports = { replicaStateChange, withDefaults, REPLICA_STATES, Call, ControllerMoved, BEHAVIOUR, topicOf, replicaKey };
