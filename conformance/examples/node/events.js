// The `event` request of the Node.js example SUT: guards, environment parts and the dispatch to the
// controller's handlers (controller.js), kafka-2.8 only (PROTOCOL.md, "Events").
//
// `controllerEvent(state, profile, event)` returns the step reply body, or throws NotEnabled (the guard is
// false: the error `not_enabled`) or RangeError (an unknown event kind or a malformed event: `invalid_input`).
"use strict";

const { ControllerMoved, BEHAVIOUR, topicOf } = require("./replica_machine.js");
const { Controller, NotEnabled, EventFailed, IllegalState, byPartition, has, uniq, answer, WHOLE_REQUEST } = require("./controller.js");

const partitionsOf = (zk, topic) => Object.keys(zk.assignments).filter((tp) => topicOf(tp) === topic);
const validReplicaList = (list) =>
  Array.isArray(list) && list.length > 0 && uniq(list).length === list.length && list.every((r) => Number.isInteger(r) && r >= 0);

function require_(condition) {
  if (!condition) throw new NotEnabled("the event's guard is false in the loaded state");
}

// Each event kind: its guard, its environment part and its controller part, on the Controller `k` (k.s is the
// state, k.ctx the controller context).
// A StopReplica response (§8) is about partitions whose replica on the responding broker is being deleted.
const respondingForStartedReplicas = (s, e) =>
  s.controller.controller_id !== -1 &&
  e.partitions.length > 0 &&
  e.partitions.every((tp) => s.controller.replica_states[`${tp}/${e.broker_id}`] === "ReplicaDeletionStarted");

// The controller's event queue (capability `callbacks`): requests with a callback wait in
// controller.queued_elections, at most config.max_queued_requests of them (0 by default: none ever waits).
const queueLength = (s) => (s.controller.queued_elections || []).length;
const queueHasRoom = (s) => s.controller.controller_id !== -1 && queueLength(s) < (s.config.max_queued_requests || 0);
const enqueue = (k, queued) => {
  k.ctx.queued_elections = (k.ctx.queued_elections || []).concat([queued]);
};
// A queued request as the state holds it: every field of QueuedElection.
const queuedRequest = (fields) => ({
  partitions: [],
  election_type: "PREFERRED",
  kind: "ReplicaLeaderElection",
  broker_id: -1,
  broker_epoch: -1,
  targets: {},
  cancels: [],
  ...fields,
});

// QueuedEventProcessed: the oldest request leaves the queue and is processed as its event is; its callback's
// answers are request 0 (the head of the queue). A ControllerMovedException leaves the event (the controller
// resigns, answering the rest of the queue).
function processQueued(k) {
  const [head, ...rest] = k.ctx.queued_elections;
  k.ctx.queued_elections = rest;
  const queued = queuedRequest(head);
  switch (queued.kind) {
    case "ReplicaLeaderElection": {
      const results = k.processReplicaLeaderElection(queued.partitions, queued.election_type, "AdminClientTriggered");
      for (const [tp, r] of results) k.answers.push(answer(0, tp, r.error, { leader: r.leader }));
      return;
    }
    case "ControlledShutdown": {
      let led;
      try {
        led = k.doControlledShutdown(queued.broker_id, queued.broker_epoch);
      } catch (e) {
        if (e instanceof ControllerMoved) {
          k.answers.push(answer(0, WHOLE_REQUEST, "NOT_CONTROLLER", { exception: "ControllerMovedException" }));
        } else if (e instanceof EventFailed) {
          k.answers.push(answer(0, WHOLE_REQUEST, "UNKNOWN_SERVER_ERROR", { exception: e.exception }));
        }
        throw e;
      }
      k.answers.push(answer(0, WHOLE_REQUEST, "NONE"));
      for (const tp of led) k.answers.push(answer(0, tp, "NONE", { leader: queued.broker_id }));
      return;
    }
    case "ApiPartitionReassignment": {
      const targets = { ...queued.targets };
      for (const tp of queued.cancels) targets[tp] = null;
      const results = k.processApiPartitionReassignment(targets);
      for (const [tp, error] of results) k.answers.push(answer(0, tp, error));
      return;
    }
    case "ListPartitionReassignments": {
      k.answers.push(answer(0, WHOLE_REQUEST, "NONE"));
      for (const [tp, fa] of k.listPartitionReassignments(queued.partitions)) {
        k.answers.push(answer(0, tp, "NONE", { assignment: fa }));
      }
      return;
    }
    default:
      throw new RangeError(`unknown queued request kind ${queued.kind}`);
  }
}

const EVENTS = {
  ControllerFailover: {
    guard: (s, e) => has(s.zk.brokers, e.broker_id),
    environment: (k, e) => {
      if (k.isActive()) k.resign();
      k.s.zk.controller = e.broker_id;
      k.s.zk.controller_epoch += 1;
      k.s.zk.controller_epoch_zk_version += 1;
    },
    controller: (k, e) => {
      k.ctx.controller_id = e.broker_id;
      k.ctx.epoch = k.s.zk.controller_epoch;
      k.ctx.epoch_zk_version = k.s.zk.controller_epoch_zk_version;
      k.onControllerFailover();
    },
  },
  ControllerResignation: {
    guard: (s) => s.controller.controller_id !== -1,
    environment: (k) => {
      k.s.zk.controller = -1;
    },
    controller: (k) => k.resign(),
  },
  NewerControllerElected: {
    guard: (s, e) => s.controller.controller_id !== -1 && has(s.zk.brokers, e.broker_id) && e.broker_id !== s.controller.controller_id,
    environment: (k, e) => {
      k.s.zk.controller = e.broker_id;
      k.s.zk.controller_epoch += 1;
      k.s.zk.controller_epoch_zk_version += 1;
    },
    controller: () => {},
  },
  ControllerChange: {
    guard: (s) => s.controller.controller_id !== -1 && s.zk.controller !== s.controller.controller_id,
    environment: () => {},
    controller: (k) => k.resign(),
  },
  ZombieControllerWrite: {
    guard: (s, e) =>
      s.zk.partition_states[e.tp] !== undefined && e.controller_epoch >= 1 && e.controller_epoch < s.zk.controller_epoch,
    environment: () => {}, // kafka-2.8: the write's /controller_epoch check fails
    controller: () => {},
  },
  BrokerStartup: {
    guard: (s, e) => e.broker_id >= 0 && !has(s.zk.brokers, e.broker_id),
    environment: (k, e) => {
      k.s.zk.brokers[e.broker_id] = k.s.zk.zxid;
      k.s.zk.zxid += 1;
    },
    controller: (k) => k.processBrokerChange(),
  },
  BrokerFailure: {
    guard: (s, e) => has(s.zk.brokers, e.broker_id),
    environment: (k, e) => {
      delete k.s.zk.brokers[e.broker_id];
      if (k.s.zk.controller === e.broker_id) k.s.zk.controller = -1;
    },
    controller: (k, e) => {
      if (k.ctx.controller_id === e.broker_id) k.resign();
      else k.processBrokerChange();
    },
  },
  BrokerBounce: {
    guard: (s, e) => has(s.zk.brokers, e.broker_id) && e.broker_id !== s.controller.controller_id,
    environment: (k, e) => {
      k.s.zk.brokers[e.broker_id] = k.s.zk.zxid;
      k.s.zk.zxid += 1;
    },
    controller: (k) => k.processBrokerChange(),
  },
  // Several brokers in one watch firing: each list ascending without repeats, no broker in two lists, at least two
  // brokers in all; new ones are registered (then bounced ones re-registered) with consecutive zxids, in that order.
  BrokerChange: {
    guard: (s, e) => {
      const lists = [e.new_broker_ids || [], e.dead_broker_ids || [], e.bounced_broker_ids || []];
      const ascending = (list) => list.every((b, i) => i === 0 || list[i - 1] < b);
      const all = lists.flat();
      const leaving = lists[1].concat(lists[2]);
      return (
        lists.every(ascending) &&
        all.length >= 2 &&
        uniq(all).length === all.length &&
        lists[0].every((b) => b >= 0 && !has(s.zk.brokers, b)) &&
        s.controller.partitions_being_reassigned.length === 0 &&
        Object.keys(s.controller.legacy_reassignments || {}).length === 0 &&
        leaving.every((b) => has(s.zk.brokers, b) && b !== s.controller.controller_id)
      );
    },
    environment: (k, e) => {
      for (const b of (e.new_broker_ids || []).concat(e.bounced_broker_ids || [])) {
        k.s.zk.brokers[b] = k.s.zk.zxid;
        k.s.zk.zxid += 1;
      }
      for (const b of e.dead_broker_ids || []) {
        delete k.s.zk.brokers[b];
        if (k.s.zk.controller === b) k.s.zk.controller = -1;
      }
    },
    controller: (k) => k.processBrokerChange(),
  },
  // onBrokerLogDirFailure: a LeaderAndIsr for every replica on the notified (live) brokers.
  LogDirEventNotification: {
    guard: (s, e) =>
      s.controller.controller_id !== -1 && e.broker_ids.length > 0 && e.broker_ids.every((b) => has(s.controller.live_brokers, b)),
    environment: () => {},
    controller: (k, e) => k.replicaChange(k.replicasOnBrokers(uniq(e.broker_ids)), "OnlineReplica"),
  },
  ControlledShutdown: {
    guard: (s, e) => s.controller.controller_id !== -1 && has(s.zk.brokers, e.broker_id),
    environment: () => {},
    controller: (k, e) => k.doControlledShutdown(e.broker_id, e.broker_epoch === undefined ? -1 : e.broker_epoch),
  },
  TopicCreation: {
    guard: (s, e) =>
      !s.zk.topics.includes(e.topic) && Array.isArray(e.replicas) && e.replicas.length > 0 && e.replicas.every(validReplicaList),
    environment: (k, e) => {
      // the topic znode /brokers/topics/<t> with its partition map
      k.s.zk.topics = k.s.zk.topics.concat([e.topic]).sort();
      // KIP-516: the admin client gives the topic znode a fresh topic ID when the IBP uses them
      if (k.usesTopicId()) k.s.zk.topic_ids[e.topic] = k.newTopicId();
      e.replicas.forEach((replicas, i) => {
        k.s.zk.assignments[`${e.topic}-${i}`] = { replicas: replicas.slice(), adding: [], removing: [] };
      });
    },
    controller: (k) => k.processTopicChange(),
  },
  PartitionExpansion: {
    guard: (s, e) => {
      const n = partitionsOf(s.zk, e.topic).length;
      if (n === 0 || !Array.isArray(e.replicas) || e.replicas.length <= n) return false;
      for (let i = 0; i < e.replicas.length; i++) {
        const current = s.zk.assignments[`${e.topic}-${i}`];
        if (i < n) {
          if (current === undefined || JSON.stringify(current.replicas) !== JSON.stringify(e.replicas[i])) return false;
        } else if (!validReplicaList(e.replicas[i])) {
          return false;
        }
      }
      return true;
    },
    environment: (k, e) => {
      const n = partitionsOf(k.s.zk, e.topic).length;
      for (let i = n; i < e.replicas.length; i++) {
        k.s.zk.assignments[`${e.topic}-${i}`] = { replicas: e.replicas[i].slice(), adding: [], removing: [] };
      }
    },
    controller: (k, e) => k.processPartitionModifications(e.topic),
  },
  TopicDeletion: {
    guard: (s, e) => Array.isArray(e.topics) && e.topics.length > 0,
    environment: (k, e) => {
      k.s.zk.delete_topics = uniq(k.s.zk.delete_topics.concat(e.topics));
    },
    controller: (k) => k.processTopicDeletion(),
  },
  StopReplicaResponseReceived: {
    guard: respondingForStartedReplicas,
    environment: () => {},
    controller: (k, e) => k.stopReplicaResponse(e.broker_id, e.partitions, e.error ? e.partitions : []),
  },
  StopReplicaPartitionErrorsReceived: {
    guard: (s, e) =>
      s.controller.controller_id !== -1 &&
      e.partitions.length > 0 &&
      e.partitions.every((tp) => s.controller.replica_states[`${tp}/${e.broker_id}`] === "ReplicaDeletionStarted") &&
      e.partition_errors.length > 0 &&
      e.partition_errors.every((tp) => e.partitions.includes(tp)) &&
      !e.partitions.every((tp) => e.partition_errors.includes(tp)),
    environment: () => {},
    controller: (k, e) => k.stopReplicaResponse(e.broker_id, e.partitions, e.partition_errors),
  },
  StopReplicaResponseWithoutDeletionReceived: {
    guard: respondingForStartedReplicas,
    environment: () => {},
    // §3.4: the StopReplica response callback keeps only partitions whose request asked deletePartition=true
    // (KAFKA-9946); this request asked none, so no TopicDeletionStopReplicaResponseReceived is enqueued
    controller: () => {},
  },
  ApiPartitionReassignment: {
    guard: (s, e) => s.controller.controller_id !== -1 && Object.keys(e.targets || {}).length > 0,
    environment: () => {},
    controller: (k, e) => k.processApiPartitionReassignment(e.targets),
  },
  ZkPartitionReassignment: {
    guard: (s, e) => Object.keys(e.targets || {}).length > 0 && Object.keys(s.zk.reassign_partitions).length === 0,
    environment: (k, e) => {
      k.s.zk.reassign_partitions = structuredClone(e.targets);
    },
    controller: (k) => k.processZkPartitionReassignment(),
  },
  ReplicaLeaderElection: {
    guard: (s, e) => {
      const trigger = e.trigger || "ZkTriggered";
      const type = e.election_type || "PREFERRED";
      if (s.controller.controller_id === -1 || e.partitions.length === 0) return false;
      if (trigger === "ZkTriggered") return type === "PREFERRED" && s.zk.preferred_replica_election.length === 0;
      return trigger === "AdminClientTriggered";
    },
    environment: (k, e) => {
      if ((e.trigger || "ZkTriggered") === "ZkTriggered") k.s.zk.preferred_replica_election = e.partitions.slice();
    },
    controller: (k, e) => k.processReplicaLeaderElection(e.partitions, e.election_type || "PREFERRED", e.trigger || "ZkTriggered"),
  },
  AutoPreferredReplicaLeaderElection: {
    guard: (s) => s.controller.controller_id !== -1 && s.config.auto_leader_rebalance_enable,
    environment: () => {},
    controller: (k) => k.checkAndTriggerAutoLeaderRebalance(),
  },
  IsrChange: {
    guard: (s, e) => {
      const znode = s.zk.partition_states[e.tp];
      if (znode === undefined) return false;
      const leader = znode.leader_and_isr.leader;
      const fa = s.zk.assignments[e.tp];
      return (
        leader >= 0 &&
        has(s.zk.brokers, leader) &&
        e.isr.includes(leader) &&
        uniq(e.isr).length === e.isr.length &&
        e.isr.every((r) => r >= 0) &&
        fa !== undefined &&
        e.isr.every((r) => fa.replicas.includes(r))
      );
    },
    // IBP >= 2.7-IV2: the leader sends AlterIsr. Below: it writes the state znode (same leader epoch, version + 1,
    // the znode's controller epoch kept) and an ISR-change notification.
    environment: (k, e) => {
      if (k.alterIsrEnabled()) return;
      const zk = k.s.zk;
      const znode = zk.partition_states[e.tp];
      znode.leader_and_isr.isr = e.isr.slice();
      znode.leader_and_isr.zk_version += 1;
      if (!zk.isr_change_notifications.includes(e.tp)) zk.isr_change_notifications.push(e.tp);
    },
    controller: (k, e) => {
      if (!k.alterIsrEnabled()) {
        // IsrChangeNotification (an exception ends that event only), then the state znode's data watch of a
        // partition being reassigned: PartitionReassignmentIsrChange.
        try {
          k.processIsrChangeNotification();
        } catch (err) {
          if (!(err instanceof EventFailed)) throw err;
        }
        if (k.ctx.partitions_being_reassigned.includes(e.tp)) k.maybeCompleteReassignment(e.tp);
        return;
      }
      const lai = k.s.zk.partition_states[e.tp].leader_and_isr;
      const proposal = { leader: lai.leader, leader_epoch: lai.leader_epoch, isr: e.isr.slice(), zk_version: lai.zk_version };
      k.processAlterIsr(lai.leader, k.s.zk.brokers[lai.leader], { [e.tp]: proposal });
    },
  },
  StaleAlterIsrReceived: {
    guard: (s, e) => {
      const znode = s.zk.partition_states[e.tp];
      const fa = s.zk.assignments[e.tp];
      if (s.controller.controller_id === -1 || znode === undefined || fa === undefined) return false;
      if (!has(s.zk.brokers, e.broker_id)) return false;
      // brokers of an IBP below 2.7-IV2 send no AlterIsr
      const ibps = ["KAFKA_2_6_IV0", "KAFKA_2_7_IV0"];
      if (ibps.includes((s.config || {}).inter_broker_protocol)) return false;
      const lai = znode.leader_and_isr;
      const registered = s.zk.brokers[e.broker_id];
      return (
        e.isr.includes(e.broker_id) &&
        uniq(e.isr).length === e.isr.length &&
        e.isr.every((r) => r >= 0 && fa.replicas.includes(r)) &&
        e.broker_epoch >= 0 &&
        e.broker_epoch <= registered &&
        e.leader_epoch >= 0 &&
        e.leader_epoch <= lai.leader_epoch &&
        e.zk_version >= 0 &&
        e.zk_version <= lai.zk_version &&
        (e.zk_version < lai.zk_version || (e.leader_epoch === lai.leader_epoch && e.broker_epoch < registered))
      );
    },
    environment: () => {},
    controller: (k, e) => {
      const proposal = { leader: e.broker_id, leader_epoch: e.leader_epoch, isr: e.isr.slice(), zk_version: e.zk_version };
      k.processAlterIsr(e.broker_id, e.broker_epoch, { [e.tp]: proposal });
    },
  },
  LeaderAndIsrResponseReceived: {
    guard: (s, e) => {
      const errors = e.storage_errors || [];
      return (
        s.controller.controller_id !== -1 &&
        has(s.controller.live_brokers, e.broker_id) &&
        errors.length > 0 &&
        errors.every((tp) => (s.controller.assignments[tp] || { replicas: [] }).replicas.includes(e.broker_id))
      );
    },
    environment: () => {},
    controller: (k, e) => k.processLeaderAndIsrResponse(e.broker_id, [], e.storage_errors || []),
  },
  LeaderAndIsrPartitionResultsReceived: {
    guard: (s, e) => {
      const errors = e.storage_errors || [];
      const assigned = (tp) => (s.controller.assignments[tp] || { replicas: [] }).replicas.includes(e.broker_id);
      return (
        s.controller.controller_id !== -1 &&
        has(s.controller.live_brokers, e.broker_id) &&
        e.online.length > 0 &&
        !e.online.some((tp) => errors.includes(tp)) &&
        e.online.every(assigned) &&
        errors.every(assigned)
      );
    },
    environment: () => {},
    controller: (k, e) => k.processLeaderAndIsrResponse(e.broker_id, e.online, e.storage_errors || []),
  },
  UncleanLeaderElectionEnable: {
    guard: () => true,
    environment: (k, e) => {
      const topic = e.topic || "";
      if (topic === "") k.s.config.unclean_leader_election_enable = true;
      else k.s.config.unclean_topics = uniq(k.s.config.unclean_topics.concat([topic]));
    },
    controller: (k, e) => k.triggerOnlinePartitionStateChange(e.topic ? e.topic : undefined),
  },
  ReplicaLeaderElectionQueued: {
    guard: (s, e) => queueHasRoom(s) && e.partitions.length > 0,
    environment: (k, e) => enqueue(k, queuedRequest({ partitions: e.partitions.slice(), election_type: e.election_type || "PREFERRED" })),
    controller: () => {},
  },
  ControlledShutdownQueued: {
    guard: (s, e) => queueHasRoom(s) && has(s.zk.brokers, e.broker_id),
    environment: (k, e) =>
      enqueue(
        k,
        queuedRequest({ kind: "ControlledShutdown", broker_id: e.broker_id, broker_epoch: e.broker_epoch === undefined ? -1 : e.broker_epoch }),
      ),
    controller: () => {},
  },
  ApiPartitionReassignmentQueued: {
    guard: (s, e) => queueHasRoom(s) && Object.keys(e.targets || {}).length > 0,
    environment: (k, e) => {
      const targets = {};
      const cancels = [];
      for (const [tp, target] of Object.entries(e.targets)) {
        if (target === null) cancels.push(tp);
        else targets[tp] = target.slice();
      }
      enqueue(k, queuedRequest({ kind: "ApiPartitionReassignment", targets, cancels }));
    },
    controller: () => {},
  },
  ListPartitionReassignmentsQueued: {
    guard: (s) => queueHasRoom(s),
    environment: (k, e) => enqueue(k, queuedRequest({ kind: "ListPartitionReassignments", partitions: (e.partitions || []).slice() })),
    controller: () => {},
  },
  QueuedEventProcessed: {
    guard: (s) => s.controller.controller_id !== -1 && queueLength(s) > 0,
    environment: () => {},
    controller: (k) => processQueued(k),
  },
  ZkFaultInjection: {
    // on a state znode, or (CONNECTIONLOSS only) on the path of one still to be created: its create throws
    guard: (s, e) =>
      !has(s.zk.faults, e.tp) &&
      (s.zk.partition_states[e.tp] !== undefined || (s.zk.assignments[e.tp] !== undefined && e.fault === "CONNECTIONLOSS")),
    environment: (k, e) => {
      k.s.zk.faults[e.tp] = e.fault;
    },
    controller: () => {},
  },
};

// The fields of every event kind and their JSON types (PROTOCOL.md, "Events"); a `?` marks a field with a default.
// A malformed event (a missing field, a wrong type, an unknown field) is the error `invalid_input`, checked before
// the guard, so that no handler ever sees one.
const FIELDS = {
  ControllerFailover: { broker_id: "int" },
  ControllerResignation: {},
  NewerControllerElected: { broker_id: "int" },
  ControllerChange: {},
  ZombieControllerWrite: { tp: "tp", leader: "int", isr: "ints", controller_epoch: "int" },
  BrokerStartup: { broker_id: "int" },
  BrokerFailure: { broker_id: "int" },
  BrokerBounce: { broker_id: "int" },
  ControlledShutdown: { broker_id: "int", broker_epoch: "int?" },
  TopicCreation: { topic: "str", replicas: "lists" },
  PartitionExpansion: { topic: "str", replicas: "lists" },
  TopicDeletion: { topics: "strs" },
  StopReplicaResponseReceived: { broker_id: "int", partitions: "tps", error: "bool?" },
  ApiPartitionReassignment: { targets: "targets" },
  ZkPartitionReassignment: { targets: "zk_targets" },
  ReplicaLeaderElection: { partitions: "tps", election_type: "election_type?", trigger: "trigger?" },
  AutoPreferredReplicaLeaderElection: {},
  IsrChange: { tp: "tp", isr: "ints" },
  LeaderAndIsrResponseReceived: { broker_id: "int", storage_errors: "tps?" },
  UncleanLeaderElectionEnable: { topic: "str?" },
  ZkFaultInjection: { tp: "tp", fault: "fault" },
  StopReplicaPartitionErrorsReceived: { broker_id: "int", partitions: "tps", partition_errors: "tps" },
  LeaderAndIsrPartitionResultsReceived: { broker_id: "int", online: "tps", storage_errors: "tps?" },
  StaleAlterIsrReceived: { broker_id: "int", broker_epoch: "int", tp: "tp", leader_epoch: "int", isr: "ints", zk_version: "int" },
  BrokerChange: { new_broker_ids: "ints?", dead_broker_ids: "ints?", bounced_broker_ids: "ints?" },
  LogDirEventNotification: { broker_ids: "ints" },
  StopReplicaResponseWithoutDeletionReceived: { broker_id: "int", partitions: "tps", error: "bool?" },
  ReplicaLeaderElectionQueued: { partitions: "tps", election_type: "election_type?" },
  ControlledShutdownQueued: { broker_id: "int", broker_epoch: "int?" },
  ApiPartitionReassignmentQueued: { targets: "targets?" },
  ListPartitionReassignmentsQueued: { partitions: "tps?" },
  QueuedEventProcessed: {},
};

// While a request waits in the event queue, every event with a controller part waits behind it: its guard also
// needs an empty queue. The exceptions: ControllerResignation (Expire is put with clearAndPut: it preempts the
// queue) and the events without a controller part.
const QUEUE_INDEPENDENT = [
  "ControllerResignation",
  "NewerControllerElected",
  "ZombieControllerWrite",
  "ZkFaultInjection",
  "StopReplicaResponseWithoutDeletionReceived",
  "ReplicaLeaderElectionQueued",
  "ControlledShutdownQueued",
  "ApiPartitionReassignmentQueued",
  "ListPartitionReassignmentsQueued",
  "QueuedEventProcessed",
];

const isTp = (v) => typeof v === "string" && /^.+-[0-9]+$/.test(v);
const isInts = (v) => Array.isArray(v) && v.every(Number.isInteger);
const TYPES = {
  int: Number.isInteger,
  ints: isInts,
  str: (v) => typeof v === "string",
  strs: (v) => Array.isArray(v) && v.every((x) => typeof x === "string"),
  bool: (v) => typeof v === "boolean",
  tp: isTp,
  tps: (v) => Array.isArray(v) && v.every(isTp),
  lists: (v) => Array.isArray(v) && v.every(isInts),
  targets: (v) =>
    v !== null && typeof v === "object" && !Array.isArray(v) && Object.entries(v).every(([k, x]) => isTp(k) && (x === null || isInts(x))),
  zk_targets: (v) =>
    v !== null && typeof v === "object" && !Array.isArray(v) && Object.entries(v).every(([k, x]) => isTp(k) && isInts(x)),
  election_type: (v) => v === "PREFERRED" || v === "UNCLEAN",
  trigger: (v) => v === "ZkTriggered" || v === "AdminClientTriggered" || v === "AutoTriggered",
  fault: (v) => v === "BADVERSION" || v === "CONNECTIONLOSS",
};

// Throws RangeError (invalid_input) naming the first malformed field of `event`.
function checkFields(event) {
  const fields = FIELDS[event.kind];
  for (const name of Object.keys(event)) {
    if (name !== "kind" && !(name in fields)) throw new RangeError(`${event.kind}: unknown field ${name}`);
  }
  for (const [name, type] of Object.entries(fields)) {
    const optional = type.endsWith("?");
    const value = event[name];
    if (value === undefined || value === null) {
      if (optional) continue;
      throw new RangeError(`${event.kind}: missing field ${name}`);
    }
    if (!TYPES[type.replace("?", "")](value)) {
      throw new RangeError(`${event.kind}: field ${name} is not of type ${type.replace("?", "")}: ${JSON.stringify(value)}`);
    }
  }
}

// Kafka's defaults for the configuration fields a loaded state leaves out.
function withConfig(state) {
  return {
    ...state,
    config: {
      max_queued_requests: 0,
      delete_topic_enable: true,
      unclean_leader_election_enable: false,
      unclean_topics: [],
      auto_leader_rebalance_enable: true,
      leader_imbalance_per_broker_percentage: 10,
      inter_broker_protocol: "KAFKA_2_8_IV1",
      ...(state.config || {}),
    },
  };
}

// Identical requests sent twice in one event are one element of the reply's set.
function distinct(requests) {
  const seen = new Map();
  for (const req of requests) {
    const canonical = { ...req, partition_states: req.partition_states.slice().sort((a, b) => byPartition(a.tp, b.tp)) };
    const key = JSON.stringify(canonical);
    if (!seen.has(key)) seen.set(key, canonical);
  }
  return Array.from(seen.values());
}

function distinctAnswers(answers) {
  const seen = new Map();
  for (const a of answers) seen.set(JSON.stringify(a), a);
  return Array.from(seen.values());
}

function controllerEvent(state, profile, event) {
  const behaviour = BEHAVIOUR[profile];
  if (behaviour === undefined) throw new RangeError(`unknown profile ${profile}`);
  const spec = event !== null && typeof event === "object" ? EVENTS[event.kind] : undefined;
  if (spec === undefined) throw new RangeError(`unknown event kind ${event && event.kind}`);
  checkFields(event);
  const k = new Controller(withConfig(structuredClone(state)), behaviour);
  require_(spec.guard(k.s, event));
  if (!QUEUE_INDEPENDENT.includes(event.kind)) require_(queueLength(k.s) === 0);
  spec.environment(k, event);
  // The controller part runs only while a controller is active; ControllerFailover's is the new controller's.
  if (k.isActive() || event.kind === "ControllerFailover") {
    try {
      spec.controller(k, event);
    } catch (e) {
      if (e instanceof ControllerMoved) {
        // maybeResign: the controller resigns when /controller no longer names it.
        if (k.s.zk.controller !== k.ctx.controller_id) k.resign();
      } else if (e instanceof IllegalState) {
        // triggerControllerMove: resign, then delete /controller (fenced by the epoch zk version).
        const fenced = k.s.zk.controller_epoch_zk_version !== k.ctx.epoch_zk_version;
        k.resign();
        if (!fenced) k.s.zk.controller = -1;
      } else if (!(e instanceof EventFailed)) {
        throw e;
      }
    }
  }
  const step = { state: k.s, requests: distinct(k.sent), failures: Array.from(k.failures.values()), results: {} };
  // `answers` (protocol 1.3): present when the step answered callbacks; a set.
  if (k.answers.length > 0) step.answers = distinctAnswers(k.answers);
  return step;
}

module.exports = { controllerEvent, NotEnabled, EVENT_KINDS: Object.keys(EVENTS), EVENT_FIELDS: FIELDS };
