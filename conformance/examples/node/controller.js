// Whole controller events of the Node.js example SUT, kafka-2.8 (plain JavaScript, no dependencies).
//
// One `controllerEvent(state, profile, event)` call is one kcspec event (PROTOCOL.md, "Events"): the guard
// (false: the error `not_enabled`), the environment part, then — only while a controller is active — the
// controller part: Kafka 2.8.2's handler of the event (semantics §7, §8), built from the replica and
// partition state machines of replica_machine.js and partition_machine.js. Every state-machine call and every
// controller send is one batch; the requests of all of them are the event's `requests`.
//
// Exceptions inside the controller part follow §7: a ControllerMovedException (a fenced ZooKeeper write, §3.3)
// ends the event and the controller resigns when /controller no longer names it; any other exception ends the
// event with its partial effects kept.
//
// Ordering decisions (Kafka iterates hash sets): brokers in ascending id, topics and partitions in ascending
// name order, the same decision as the state machines'.
"use strict";

const { Call, ControllerMoved, topicOf, replicaKey, withDefaults } = require("./replica_machine.js");
const { PartitionCall } = require("./partition_machine.js");

const OFFLINE_STRATEGY = { strategy: "OfflinePartitionLeaderElectionStrategy", allow_unclean: false };
const REASSIGN_STRATEGY = { strategy: "ReassignPartitionLeaderElectionStrategy", allow_unclean: false };
const PREFERRED_STRATEGY = { strategy: "PreferredReplicaPartitionLeaderElectionStrategy", allow_unclean: false };
const SHUTDOWN_STRATEGY = { strategy: "ControlledShutdownPartitionLeaderElectionStrategy", allow_unclean: false };

// The event is answered `not_enabled`.
class NotEnabled extends Error {}
// An exception that ends the controller part (Kafka logs "Error processing event"); effects so far stay.
// `exception` names Kafka's exception where a callback answers it (a controlled shutdown's Failure).
class EventFailed extends Error {
  constructor(message, exception = "IllegalStateException") {
    super(message);
    this.exception = exception;
  }
}
// An exception that makes the controller move (triggerControllerMove: resign, then delete /controller).
class IllegalState extends Error {}

const byName = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
const byId = (a, b) => a - b;
const has = (obj, key) => Object.prototype.hasOwnProperty.call(obj, String(key));
const uniq = (list) => Array.from(new Set(list));
const minus = (a, b) => a.filter((x) => !b.includes(x));
const sameList = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
const partitionIndex = (tp) => Number(tp.slice(tp.lastIndexOf("-") + 1));
const byPartition = (a, b) => byName(topicOf(a), topicOf(b)) || partitionIndex(a) - partitionIndex(b);

function emptyContext() {
  return withDefaults({}).controller;
}

// The error an admin election answers for a partition whose election failed (§7.9): a StateChangeFailedException
// is PREFERRED_LEADER_NOT_AVAILABLE / ELIGIBLE_LEADERS_NOT_AVAILABLE, a ZooKeeper error UNKNOWN_SERVER_ERROR.
function electionError(reason, type) {
  if (reason === "ZkError") return "UNKNOWN_SERVER_ERROR";
  return type === "PREFERRED" ? "PREFERRED_LEADER_NOT_AVAILABLE" : "ELIGIBLE_LEADERS_NOT_AVAILABLE";
}

// The partition an answer about a whole request names (topic "", partition -1).
const WHOLE_REQUEST = "--1";
const NO_ASSIGNMENT = { replicas: [], adding: [], removing: [] };

function answer(request, tp, error, extra = {}) {
  return { request, tp, error, leader: -1, exception: "", assignment: NO_ASSIGNMENT, ...extra };
}

// A queued request answered by a controller that is not active (§7.7.1, §7.9, §7.10, §7.12).
function notControllerAnswers(queued, place) {
  switch (queued.kind || "ReplicaLeaderElection") {
    case "ReplicaLeaderElection":
      return queued.partitions.map((tp) => answer(place, tp, "NOT_CONTROLLER"));
    case "ControlledShutdown":
      return [answer(place, WHOLE_REQUEST, "NOT_CONTROLLER", { exception: "ControllerMovedException" })];
    default:
      return [answer(place, WHOLE_REQUEST, "NOT_CONTROLLER")];
  }
}

class Controller extends PartitionCall {
  constructor(state, behaviour) {
    super(state, behaviour, true);
    this.answers = []; // what the callbacks of queued requests were answered during the event (`answers`)
  }

  // ------------------------------------------------------------------------------------------ state machines

  replicaChange(replicas, target) {
    Call.prototype.handleStateChanges.call(this, replicas, target);
  }

  partitionChange(partitions, target, election) {
    PartitionCall.prototype.handleStateChanges.call(this, partitions, target, election);
  }

  // sendUpdateMetadataRequest(brokers, partitions): one batch.
  sendUpdateMetadata(brokers, partitions) {
    this.clearBatch();
    this.addUpdateMetadata(brokers, partitions);
    this.send();
  }

  // ------------------------------------------------------------------------------------------ context helpers

  isActive() {
    return this.ctx.controller_id !== -1;
  }

  deleteEnabled() {
    return this.s.config.delete_topic_enable;
  }

  allPartitions() {
    return Object.keys(this.ctx.assignments).sort(byPartition);
  }

  partitionsOfTopic(topic) {
    return this.allPartitions().filter((tp) => topicOf(tp) === topic);
  }

  replicasOfTopic(topic) {
    const out = [];
    for (const tp of this.partitionsOfTopic(topic)) {
      for (const r of this.assignment(tp).replicas) out.push(replicaKey(tp, r));
    }
    return out;
  }

  replicasOnBrokers(brokers) {
    const out = [];
    for (const tp of this.allPartitions()) {
      for (const r of this.assignment(tp).replicas) if (brokers.includes(r)) out.push(replicaKey(tp, r));
    }
    return out;
  }

  leaderOf(tp) {
    const li = this.leadership(tp);
    return li === undefined ? undefined : li.leader_and_isr.leader;
  }

  partitionsWithLeaders() {
    return Object.keys(this.ctx.leadership)
      .filter((tp) => !this.queuedForDeletion(topicOf(tp)))
      .sort(byPartition);
  }

  partitionsWithOfflineLeader() {
    return this.partitionsWithLeaders().filter((tp) => !this.isOnline(this.leaderOf(tp), tp));
  }

  isBeingReassigned(fa) {
    return fa.adding.length > 0 || fa.removing.length > 0;
  }

  targetReplicas(fa) {
    return minus(fa.replicas, fa.removing);
  }

  originReplicas(fa) {
    return minus(fa.replicas, fa.adding);
  }

  // ReplicaAssignment.reassignTo(target) (§3.1).
  reassignTo(fa, target) {
    const full = uniq(target.concat(this.originReplicas(fa)));
    return { replicas: full, adding: minus(full, this.originReplicas(fa)), removing: minus(full, target) };
  }

  removeTopic(topic) {
    const c = this.ctx;
    c.topics_to_be_deleted = minus(c.topics_to_be_deleted, [topic]);
    c.topics_with_deletion_started = minus(c.topics_with_deletion_started, [topic]);
    c.all_topics = minus(c.all_topics, [topic]);
    delete c.topic_ids[topic];
    for (const tp of Object.keys(c.assignments)) {
      if (topicOf(tp) === topic) {
        delete c.assignments[tp];
        delete c.leadership[tp];
      }
    }
  }

  // Every controller write to ZooKeeper other than a partition state (§3.3): fenced by the /controller_epoch
  // CheckOp in kafka-2.8.
  checkFence() {
    if (this.b.fencing && this.s.zk.controller_epoch_zk_version !== this.ctx.epoch_zk_version) {
      throw new ControllerMoved("the /controller_epoch CheckOp failed");
    }
  }

  // onControllerResignation: the context is reset. The requests waiting in the event queue are answered as a
  // controller that is no longer active answers them (§7.12: NOT_CONTROLLER; a controlled shutdown's
  // Failure(ControllerMovedException)), each at its place in the queue.
  resign() {
    (this.ctx.queued_elections || []).forEach((queued, place) => {
      this.answers.push(...notControllerAnswers(queued, place));
    });
    this.s.controller = emptyContext();
    this.clearBatch();
  }

  // ------------------------------------------------------------------------------------------ §5.4, §7.4

  // triggerOnlinePartitionStateChange([topic]).
  triggerOnlinePartitionStateChange(topic) {
    const tps = Object.keys(this.ctx.partition_states)
      .filter((tp) => ["OfflinePartition", "NewPartition"].includes(this.ctx.partition_states[tp]))
      .filter((tp) => !this.queuedForDeletion(topicOf(tp)))
      .filter((tp) => topic === undefined || topicOf(tp) === topic)
      .sort(byPartition);
    this.partitionChange(tps, "OnlinePartition", OFFLINE_STRATEGY);
  }

  onReplicasBecomeOffline(replicas) {
    const del = replicas.filter((pr) => this.queuedForDeletion(topicOf(pr.slice(0, pr.lastIndexOf("/")))));
    const keep = minus(replicas, del);
    const offline = this.partitionsWithOfflineLeader();
    this.partitionChange(offline, "OfflinePartition", null);
    this.triggerOnlinePartitionStateChange();
    this.replicaChange(keep, "OfflineReplica");
    if (del.length > 0) this.failReplicaDeletion(del);
    if (offline.length === 0) this.sendUpdateMetadata(this.liveOrShuttingDown(), []);
  }

  onBrokerStartup(brokers) {
    const c = this.ctx;
    c.offline_replicas = c.offline_replicas.filter((pr) => !brokers.includes(Number(pr.slice(pr.lastIndexOf("/") + 1))));
    const existing = this.liveOrShuttingDown().filter((b) => !brokers.includes(b));
    this.sendUpdateMetadata(existing, []);
    this.sendUpdateMetadata(brokers, this.partitionsWithLeaders());
    const replicas = this.replicasOnBrokers(brokers);
    this.replicaChange(replicas, "OnlineReplica");
    this.triggerOnlinePartitionStateChange();
    for (const tp of c.partitions_being_reassigned.slice().sort(byPartition)) {
      const fa = this.assignment(tp);
      if (this.targetReplicas(fa).some((r) => brokers.includes(r))) this.onPartitionReassignment(tp, fa);
    }
    const deleting = uniq(
      replicas.map((pr) => topicOf(pr.slice(0, pr.lastIndexOf("/")))).filter((t) => this.queuedForDeletion(t)),
    );
    if (deleting.length > 0) this.resumeDeletionForTopics(deleting);
  }

  onBrokerFailure(brokers) {
    const c = this.ctx;
    c.offline_replicas = c.offline_replicas.filter((pr) => !brokers.includes(Number(pr.slice(pr.lastIndexOf("/") + 1))));
    c.shutting_down = minus(c.shutting_down, brokers);
    this.onReplicasBecomeOffline(this.replicasOnBrokers(brokers));
  }

  // §7.2 BrokerChange: new, bounced and dead brokers against the registrations in ZooKeeper.
  processBrokerChange() {
    const c = this.ctx;
    const registered = this.s.zk.brokers;
    const ids = Object.keys(registered).map(Number).sort(byId);
    const known = this.liveOrShuttingDown();
    const fresh = ids.filter((b) => !known.includes(b));
    const dead = known.filter((b) => !has(registered, b)).sort(byId);
    const bounced = ids.filter((b) => known.includes(b) && registered[b] > c.live_brokers[b]);
    if (fresh.length > 0) {
      for (const b of fresh) c.live_brokers[b] = registered[b];
      this.onBrokerStartup(fresh);
    }
    if (bounced.length > 0) {
      for (const b of bounced) delete c.live_brokers[b];
      this.onBrokerFailure(bounced);
      for (const b of bounced) c.live_brokers[b] = registered[b];
      this.onBrokerStartup(bounced);
    }
    if (dead.length > 0) {
      for (const b of dead) delete c.live_brokers[b];
      this.onBrokerFailure(dead);
    }
  }

  // ------------------------------------------------------------------------------------------ §7.1

  // maybeSetupFeatureVersioning: enableFeatureVersioning with IBP >= 2.7-IV0, else disableFeatureVersioning. The
  // /feature znode is created with the status (version 0) when absent, updated (version + 1) when its status
  // differs, left unmodified otherwise. Its finalized features are always empty in 2.8.2 (not reported). Neither
  // write is fenced by the controller epoch.
  maybeSetupFeatureVersioning() {
    const zk = this.s.zk;
    const status = this.ibpAtLeast("KAFKA_2_7_IV0") ? "Enabled" : "Disabled";
    if (zk.feature_znode === "Absent") {
      zk.feature_znode = status;
      zk.feature_znode_zk_version = 0;
    } else if (zk.feature_znode !== status) {
      zk.feature_znode = status;
      zk.feature_znode_zk_version += 1;
    }
  }

  // onControllerFailover; any exception but ControllerMoved ends in triggerControllerMove (§7.1 step 3).
  onControllerFailover() {
    try {
      this.doControllerFailover();
    } catch (e) {
      if (e instanceof EventFailed) throw new IllegalState(e.message);
      throw e;
    }
  }

  doControllerFailover() {
    const zk = this.s.zk;
    const c = this.ctx;
    // KIP-584, §7.1 step 1 (events run for kafka-2.8 only; 1.1 has no /feature znode).
    this.maybeSetupFeatureVersioning();
    zk.isr_change_notifications = [];
    // initializeControllerContext
    c.live_brokers = { ...zk.brokers };
    // getAllTopicsInCluster: the topic znodes, with or without partitions
    c.all_topics = zk.topics.slice().sort(byName);
    this.processTopicIds(c.all_topics);
    c.assignments = structuredClone(zk.assignments);
    c.partitions_being_reassigned = Object.keys(zk.assignments)
      .filter((tp) => this.isBeingReassigned(zk.assignments[tp]))
      .sort(byPartition);
    c.shutting_down = [];
    c.leadership = {};
    // updateLeaderAndIsrCache: one ZooKeeper read of every state znode; a CONNECTIONLOSS fault on any of them
    // fails the read (every such fault fires) and failover throws (triggerControllerMove).
    const lost = Object.keys(c.assignments).filter((tp) => this.fault(tp) === "CONNECTIONLOSS");
    if (lost.length > 0) {
      for (const tp of lost) delete zk.faults[tp];
      throw new IllegalState("connection loss reading the partition states");
    }
    for (const tp of Object.keys(c.assignments)) {
      if (zk.partition_states[tp] !== undefined) c.leadership[tp] = structuredClone(zk.partition_states[tp]);
    }
    // fetchTopicDeletionsInProgress and TopicDeletionManager.init
    const toDelete = zk.delete_topics.slice().sort(byName);
    const ineligible = toDelete.filter(
      (t) =>
        this.replicasOfTopic(t).some((pr) => !this.isOnline(Number(pr.slice(pr.lastIndexOf("/") + 1)), pr.slice(0, pr.lastIndexOf("/")))) ||
        c.partitions_being_reassigned.some((tp) => topicOf(tp) === t),
    );
    if (this.deleteEnabled()) {
      c.topics_to_be_deleted = toDelete;
      c.topics_ineligible_for_deletion = ineligible;
    } else {
      zk.delete_topics = [];
    }
    this.sendUpdateMetadata(this.liveOrShuttingDown(), []);
    // replicaStateMachine.startup (§4.8)
    const online = [];
    const offline = [];
    for (const tp of this.allPartitions()) {
      for (const r of this.assignment(tp).replicas) {
        const pr = replicaKey(tp, r);
        if (this.isOnline(r, tp)) {
          c.replica_states[pr] = "OnlineReplica";
          online.push(pr);
        } else {
          c.replica_states[pr] = "ReplicaDeletionIneligible";
          offline.push(pr);
        }
      }
    }
    this.replicaChange(online, "OnlineReplica");
    this.replicaChange(offline, "OfflineReplica");
    // partitionStateMachine.startup (§5.4)
    for (const tp of this.allPartitions()) {
      const leader = this.leaderOf(tp);
      if (leader === undefined) c.partition_states[tp] = "NewPartition";
      else c.partition_states[tp] = this.isOnline(leader, tp) ? "OnlinePartition" : "OfflinePartition";
    }
    this.triggerOnlinePartitionStateChange();
    // initializePartitionReassignments
    const handled = this.processZkPartitionReassignment();
    for (const tp of c.partitions_being_reassigned.slice().sort(byPartition)) {
      if (!handled.includes(tp)) this.onPartitionReassignment(tp, this.assignment(tp));
    }
    this.resumeDeletions();
    // pending preferred elections
    const pending = zk.preferred_replica_election
      .slice()
      .sort(byPartition)
      .filter((tp) => {
        if (!c.all_topics.includes(topicOf(tp))) return false;
        const li = this.leadership(tp);
        if (li === undefined) throw new IllegalState(`no leadership for ${tp}`);
        return li.leader_and_isr.leader !== this.assignment(tp).replicas[0];
      })
      .filter((tp) => !this.queuedForDeletion(topicOf(tp)));
    this.onReplicaElection(pending, "PREFERRED", "ZkTriggered");
  }

  // maybeTriggerPartitionReassignment's catch: a failure other than ControllerMoved is the partition's error.
  guarded(fn) {
    try {
      fn();
      return true;
    } catch (e) {
      if (e instanceof ControllerMoved || e instanceof IllegalState) throw e;
      this.clearBatch();
      return false;
    }
  }

  // ------------------------------------------------------------------------------------------ §7.6

  onNewPartitionCreation(tps) {
    const replicas = [];
    for (const tp of tps) for (const r of this.assignment(tp).replicas) replicas.push(replicaKey(tp, r));
    this.partitionChange(tps, "NewPartition", null);
    this.replicaChange(replicas, "NewReplica");
    this.partitionChange(tps, "OnlinePartition", OFFLINE_STRATEGY);
    this.replicaChange(replicas, "OnlineReplica");
  }

  processTopicChange() {
    const c = this.ctx;
    const zkTopics = this.s.zk.topics.slice().sort(byName);
    const fresh = zkTopics.filter((t) => !c.all_topics.includes(t));
    const gone = c.all_topics.filter((t) => !zkTopics.includes(t));
    c.all_topics = zkTopics;
    for (const t of gone) this.removeTopic(t);
    this.processTopicIds(fresh);
    const tps = Object.keys(this.s.zk.assignments)
      .filter((tp) => fresh.includes(topicOf(tp)))
      .sort(byPartition);
    for (const tp of tps) c.assignments[tp] = structuredClone(this.s.zk.assignments[tp]);
    this.onNewPartitionCreation(tps);
  }

  // KIP-516 model IDs: the least positive integer no topic znode holds (the spec's decision, ZkState.topic_ids).
  newTopicId() {
    const used = new Set(Object.values(this.s.zk.topic_ids));
    let id = 1;
    while (used.has(id)) id += 1;
    return id;
  }

  // processTopicIds: fresh IDs (one fenced write) for the topic znodes without one when the IBP uses topic IDs;
  // every ID read into the context, whatever the IBP.
  processTopicIds(topics) {
    const zk = this.s.zk;
    const missing = topics.filter((t) => !has(zk.topic_ids, t)).sort(byName);
    if (this.usesTopicId() && missing.length > 0) {
      this.checkFence();
      for (const t of missing) zk.topic_ids[t] = this.newTopicId();
    }
    for (const t of topics) if (has(zk.topic_ids, t)) this.ctx.topic_ids[t] = zk.topic_ids[t];
  }

  // setTopicAssignment writes the context's topic ID (none: no topic_id field) with the partition map.
  writeTopicId(topic) {
    const zk = this.s.zk;
    if (has(this.ctx.topic_ids, topic)) zk.topic_ids[topic] = this.ctx.topic_ids[topic];
    else delete zk.topic_ids[topic];
  }

  processPartitionModifications(topic) {
    const zk = this.s.zk;
    const c = this.ctx;
    const inZk = Object.keys(zk.assignments).filter((tp) => topicOf(tp) === topic);
    const toAdd = inZk.filter((tp) => c.assignments[tp] === undefined).sort(byPartition);
    if (this.queuedForDeletion(topic)) {
      if (toAdd.length > 0) {
        // KAFKA-6612: the topic znode is rewritten with the partitions that have a state znode, with their
        // in-memory assignments; it may be left with none, and the topic znode still exists
        this.checkFence();
        this.writeTopicId(topic);
        for (const tp of inZk) {
          if (has(zk.partition_states, tp)) zk.assignments[tp] = structuredClone(c.assignments[tp]);
          else delete zk.assignments[tp];
        }
      }
      return;
    }
    if (toAdd.length === 0) return;
    for (const tp of toAdd) c.assignments[tp] = structuredClone(zk.assignments[tp]);
    this.onNewPartitionCreation(toAdd);
  }

  // ------------------------------------------------------------------------------------------ §8

  topicReplicasIn(topic, state) {
    return this.replicasOfTopic(topic).filter((pr) => this.replicaState(pr) === state);
  }

  markTopicIneligibleForDeletion(topics) {
    if (!this.deleteEnabled()) return;
    const c = this.ctx;
    const add = topics.filter((t) => this.queuedForDeletion(t));
    c.topics_ineligible_for_deletion = uniq(c.topics_ineligible_for_deletion.concat(add));
  }

  resumeDeletionForTopics(topics) {
    if (!this.deleteEnabled()) return;
    const c = this.ctx;
    const resume = topics.filter((t) => this.queuedForDeletion(t));
    c.topics_ineligible_for_deletion = minus(c.topics_ineligible_for_deletion, resume);
    if (resume.length > 0) this.resumeDeletions();
  }

  isEligibleForDeletion(topic) {
    return (
      this.queuedForDeletion(topic) &&
      this.topicReplicasIn(topic, "ReplicaDeletionStarted").length === 0 &&
      !this.ctx.topics_ineligible_for_deletion.includes(topic)
    );
  }

  completeDeleteTopic(topic) {
    const zk = this.s.zk;
    this.replicaChange(this.topicReplicasIn(topic, "ReplicaDeletionSuccessful"), "NonExistentReplica");
    this.checkFence();
    zk.topics = minus(zk.topics, [topic]);
    delete zk.topic_ids[topic];
    for (const tp of Object.keys(zk.assignments)) if (topicOf(tp) === topic) delete zk.assignments[tp];
    for (const tp of Object.keys(zk.partition_states)) if (topicOf(tp) === topic) delete zk.partition_states[tp];
    // a fault belongs to its znode: it goes with the topic's partition-state znodes (PROTOCOL.md)
    for (const tp of Object.keys(zk.faults)) if (topicOf(tp) === topic) delete zk.faults[tp];
    this.s.config.unclean_topics = minus(this.s.config.unclean_topics, [topic]);
    zk.delete_topics = minus(zk.delete_topics, [topic]);
    this.removeTopic(topic);
  }

  resumeDeletions() {
    if (!this.deleteEnabled()) return;
    const retry = [];
    const eligible = [];
    for (const t of this.ctx.topics_to_be_deleted.slice().sort(byName)) {
      const replicas = this.replicasOfTopic(t);
      if (replicas.every((pr) => this.replicaState(pr) === "ReplicaDeletionSuccessful")) {
        this.completeDeleteTopic(t);
        continue;
      }
      const states = replicas.map((pr) => this.replicaState(pr));
      if (!states.includes("ReplicaDeletionStarted") && states.includes("ReplicaDeletionIneligible")) retry.push(t);
      if (this.isEligibleForDeletion(t)) eligible.push(t);
    }
    if (retry.length > 0) {
      const replicas = [];
      for (const t of retry) replicas.push(...this.topicReplicasIn(t, "ReplicaDeletionIneligible"));
      this.replicaChange(replicas, "OfflineReplica");
    }
    if (eligible.length > 0) this.onTopicDeletion(eligible);
  }

  onTopicDeletion(topics) {
    const c = this.ctx;
    const unseen = topics.filter((t) => !c.topics_with_deletion_started.includes(t));
    if (unseen.length > 0) {
      const tps = [];
      for (const t of unseen) tps.push(...this.partitionsOfTopic(t));
      this.partitionChange(tps, "OfflinePartition", null);
      this.partitionChange(tps, "NonExistentPartition", null);
      c.topics_with_deletion_started = uniq(c.topics_with_deletion_started.concat(unseen));
    }
    const all = [];
    for (const t of topics) all.push(...this.partitionsOfTopic(t));
    this.sendUpdateMetadata(this.liveOrShuttingDown(), all);
    // onPartitionDeletion
    const dead = [];
    const retry = [];
    const halted = [];
    for (const t of topics) {
      let anyDead = false;
      for (const pr of this.replicasOfTopic(t)) {
        const tp = pr.slice(0, pr.lastIndexOf("/"));
        const r = Number(pr.slice(pr.lastIndexOf("/") + 1));
        if (!this.isOnline(r, tp)) {
          dead.push(pr);
          anyDead = true;
        } else if (this.replicaState(pr) !== "ReplicaDeletionSuccessful") {
          retry.push(pr);
        }
      }
      if (anyDead) halted.push(t);
    }
    this.replicaChange(dead, "ReplicaDeletionIneligible");
    this.replicaChange(retry, "OfflineReplica");
    this.replicaChange(retry, "ReplicaDeletionStarted");
    this.markTopicIneligibleForDeletion(halted);
  }

  failReplicaDeletion(replicas) {
    if (!this.deleteEnabled()) return;
    const queued = replicas.filter((pr) => this.queuedForDeletion(topicOf(pr.slice(0, pr.lastIndexOf("/")))));
    const topics = uniq(queued.map((pr) => topicOf(pr.slice(0, pr.lastIndexOf("/")))));
    this.replicaChange(queued, "ReplicaDeletionIneligible");
    this.markTopicIneligibleForDeletion(topics);
    this.resumeDeletions();
  }

  completeReplicaDeletion(replicas) {
    if (!this.deleteEnabled()) return;
    this.replicaChange(replicas, "ReplicaDeletionSuccessful");
    this.resumeDeletions();
  }

  processTopicDeletion() {
    const zk = this.s.zk;
    const c = this.ctx;
    let topics = zk.delete_topics.slice().sort(byName);
    const missing = topics.filter((t) => !c.all_topics.includes(t));
    if (missing.length > 0) {
      this.checkFence();
      zk.delete_topics = minus(zk.delete_topics, missing);
    }
    topics = minus(topics, missing);
    if (!this.deleteEnabled()) {
      if (topics.length > 0) {
        this.checkFence();
        zk.delete_topics = minus(zk.delete_topics, topics);
      }
      return;
    }
    if (topics.length === 0) return;
    for (const t of topics) {
      if (c.partitions_being_reassigned.some((tp) => topicOf(tp) === t)) this.markTopicIneligibleForDeletion([t]);
    }
    c.topics_to_be_deleted = uniq(c.topics_to_be_deleted.concat(topics));
    this.resumeDeletions();
  }

  stopReplicaResponse(broker, partitions, errors) {
    const started = partitions.filter((tp) => this.ctx.topics_with_deletion_started.includes(topicOf(tp)));
    const failed = started.filter((tp) => errors.includes(tp)).map((tp) => replicaKey(tp, broker));
    const ok = started.filter((tp) => !errors.includes(tp)).map((tp) => replicaKey(tp, broker));
    if (failed.length > 0) this.failReplicaDeletion(failed);
    if (ok.length > 0) this.completeReplicaDeletion(ok);
  }

  // ------------------------------------------------------------------------------------------ §7.7

  // Read the partition-state znode for a controller operation (a CONNECTIONLOSS fault throws).
  readState(tp) {
    const zk = this.s.zk;
    if (this.fault(tp) === "CONNECTIONLOSS") {
      delete zk.faults[tp];
      throw new EventFailed(`connection loss reading the state of ${tp}`);
    }
    return zk.partition_states[tp];
  }

  updateLeaderEpoch(tp) {
    for (;;) {
      const znode = this.readState(tp);
      if (znode === undefined) throw new EventFailed(`leaderAndIsr path of ${tp} is empty`);
      if (znode.controller_epoch > this.ctx.epoch) throw new EventFailed(`${tp} written by a newer controller`);
      const lai = znode.leader_and_isr;
      const wanted = { ...lai, isr: lai.isr.slice(), leader_epoch: lai.leader_epoch + 1 };
      const result = this.updateLeaderAndIsr({ [tp]: wanted });
      if (result.written.includes(tp)) {
        this.ctx.leadership[tp] = structuredClone(this.s.zk.partition_states[tp]);
        return;
      }
      if (result.failed.includes(tp)) throw new EventFailed(`could not write the state of ${tp}`);
    }
  }

  updateLeaderEpochAndSendRequest(tp, fa) {
    this.updateLeaderEpoch(tp);
    this.clearBatch();
    const origin = this.originReplicas(fa).map((r) => [tp, r]);
    this.addLeaderAndIsr(origin, [tp], false);
    const adding = fa.adding.map((r) => [tp, r]);
    this.addLeaderAndIsr(adding, [tp], true);
    this.send();
  }

  isReassignmentComplete(tp, fa) {
    if (!this.isBeingReassigned(fa)) return true;
    const znode = this.readState(tp); // a ZooKeeper read, not the cache (§7.7.1)
    if (znode === undefined) return false;
    return this.targetReplicas(fa).every((r) => znode.leader_and_isr.isr.includes(r));
  }

  stopRemovedReplicas(tp, removed) {
    const replicas = removed.map((r) => replicaKey(tp, r));
    this.replicaChange(replicas, "OfflineReplica");
    this.replicaChange(replicas, "ReplicaDeletionStarted");
    this.replicaChange(replicas, "ReplicaDeletionSuccessful");
    this.replicaChange(replicas, "NonExistentReplica");
  }

  onPartitionReassignment(tp, faNew) {
    const c = this.ctx;
    const zk = this.s.zk;
    this.markTopicIneligibleForDeletion([topicOf(tp)]);
    const faCur = this.assignment(tp);
    if (!(sameList(faCur.replicas, faNew.replicas) && sameList(faCur.adding, faNew.adding) && sameList(faCur.removing, faNew.removing))) {
      this.checkFence();
      if (!zk.topics.includes(topicOf(tp))) {
        throw new EventFailed(`the topic znode of ${tp} does not exist`);
      }
      this.writeTopicId(topicOf(tp));
      zk.assignments[tp] = structuredClone(faNew);
      c.assignments[tp] = structuredClone(faNew);
      const unneeded = minus(faCur.replicas, faNew.replicas);
      if (unneeded.length > 0) this.stopRemovedReplicas(tp, unneeded);
    }
    if (!c.partitions_being_reassigned.includes(tp)) c.partitions_being_reassigned.push(tp);
    if (!this.isReassignmentComplete(tp, faNew)) {
      this.updateLeaderEpochAndSendRequest(tp, faNew);
      for (const r of faNew.adding) this.replicaChange([replicaKey(tp, r)], "NewReplica");
      return;
    }
    const target = this.targetReplicas(faNew);
    const removing = faNew.removing.slice();
    this.replicaChange(
      faNew.adding.map((r) => replicaKey(tp, r)),
      "OnlineReplica",
    );
    c.assignments[tp] = { replicas: target.slice(), adding: [], removing: [] };
    // moveReassignedPartitionLeaderIfRequired
    const leader = this.leaderOf(tp);
    if (leader === undefined || !target.includes(leader) || !this.isOnline(leader, tp)) {
      this.partitionChange([tp], "OnlinePartition", REASSIGN_STRATEGY);
    } else {
      this.updateLeaderEpochAndSendRequest(tp, c.assignments[tp]);
    }
    this.stopRemovedReplicas(tp, removing);
    this.checkFence();
    this.writeTopicId(topicOf(tp));
    zk.assignments[tp] = { replicas: target.slice(), adding: [], removing: [] };
    // removePartitionFromReassigningPartitions
    if (!c.partitions_being_reassigned.includes(tp)) throw new EventFailed(`${tp} is not being reassigned`);
    this.maybeRemoveFromZkReassignment((p, replicas) => p === tp && sameList(replicas, target));
    c.partitions_being_reassigned = minus(c.partitions_being_reassigned, [tp]);
    this.sendUpdateMetadata(this.liveOrShuttingDown(), [tp]);
    this.resumeDeletionForTopics([topicOf(tp)]);
  }

  // maybeRemoveFromZkReassignment: when /admin/reassign_partitions exists it is rewritten (or deleted when
  // nothing is left), even when no entry matches.
  maybeRemoveFromZkReassignment(remove) {
    const zk = this.s.zk;
    if (Object.keys(zk.reassign_partitions).length === 0) return;
    const rest = {};
    for (const [p, replicas] of Object.entries(zk.reassign_partitions)) if (!remove(p, replicas)) rest[p] = replicas;
    this.checkFence();
    zk.reassign_partitions = rest;
  }

  // maybeBuildReassignment: the new assignment, or null (NO_REASSIGNMENT_IN_PROGRESS).
  buildReassignment(tp, target) {
    const fa = this.assignment(tp);
    if (this.isBeingReassigned(fa)) return this.reassignTo(fa, target === null ? this.originReplicas(fa) : target);
    if (target === null) return null;
    return this.reassignTo(fa, target);
  }

  // maybeTriggerPartitionReassignment: the partitions that failed.
  triggerReassignments(reassignments) {
    return Array.from(this.triggerReassignmentErrors(reassignments).keys());
  }

  // maybeTriggerPartitionReassignment: partition -> error of the partitions that failed (§7.7.1).
  triggerReassignmentErrors(reassignments) {
    const errors = new Map();
    for (const [tp, fa] of reassignments) {
      if (this.queuedForDeletion(topicOf(tp)) || this.assignment(tp).replicas.length === 0) {
        errors.set(tp, "UNKNOWN_TOPIC_OR_PARTITION");
        continue;
      }
      if (!this.guarded(() => this.onPartitionReassignment(tp, fa))) errors.set(tp, "UNKNOWN_SERVER_ERROR");
    }
    return errors;
  }

  // ZkPartitionReassignment: the partitions it handled.
  processZkPartitionReassignment() {
    const zk = this.s.zk;
    const entries = Object.keys(zk.reassign_partitions).sort(byPartition);
    if (entries.length === 0) return [];
    const reassignments = [];
    const errors = [];
    for (const tp of entries) {
      const fa = this.buildReassignment(tp, zk.reassign_partitions[tp]);
      if (fa === null) errors.push(tp);
      else reassignments.push([tp, fa]);
    }
    errors.push(...this.triggerReassignments(reassignments));
    if (errors.length > 0) this.maybeRemoveFromZkReassignment((p) => errors.includes(p));
    return entries.filter((tp) => !errors.includes(tp));
  }

  // ApiPartitionReassignment: every partition -> the error its callback answers (NONE on success).
  processApiPartitionReassignment(targets) {
    const live = new Set(this.liveOrShuttingDown().filter((b) => !this.ctx.shutting_down.includes(b)));
    const reassignments = [];
    const results = new Map();
    for (const tp of Object.keys(targets).sort(byPartition)) {
      const target = targets[tp];
      if (target !== null) {
        const fa = this.assignment(tp);
        const addingIds = minus(target, this.originReplicas(fa));
        const invalid =
          target.length === 0 ||
          uniq(target).length !== target.length ||
          target.some((r) => r < 0) ||
          addingIds.some((r) => !live.has(r));
        if (invalid) {
          results.set(tp, "INVALID_REPLICA_ASSIGNMENT");
          continue;
        }
      }
      const fa = this.buildReassignment(tp, target);
      if (fa === null) results.set(tp, "NO_REASSIGNMENT_IN_PROGRESS");
      else reassignments.push([tp, fa]);
    }
    const accepted = reassignments.map(([tp]) => tp);
    this.maybeRemoveFromZkReassignment((tp) => accepted.includes(tp));
    const errors = this.triggerReassignmentErrors(reassignments);
    for (const tp of accepted) results.set(tp, errors.get(tp) || "NONE");
    return results;
  }

  // ListPartitionReassignments (§7.7.1): the asked partitions (none: every partition being reassigned) whose
  // context assignment has adding or removing replicas -> that assignment. Nothing changes.
  listPartitionReassignments(partitions) {
    const asked = partitions.length > 0 ? partitions : this.ctx.partitions_being_reassigned;
    const listed = new Map();
    for (const tp of asked) {
      const fa = this.ctx.assignments[tp];
      if (fa !== undefined && this.isBeingReassigned(fa)) listed.set(tp, structuredClone(fa));
    }
    return listed;
  }

  // ------------------------------------------------------------------------------------------ §7.9

  onReplicaElection(tps, type, trigger) {
    const election =
      type === "PREFERRED" ? PREFERRED_STRATEGY : { ...OFFLINE_STRATEGY, allow_unclean: trigger === "AdminClientTriggered" };
    try {
      this.partitionChange(tps, "OnlinePartition", election);
    } finally {
      if (trigger !== "AdminClientTriggered") {
        for (const tp of tps) {
          if (this.leadership(tp) === undefined) throw new EventFailed(`no leadership for ${tp}`);
        }
        if (trigger !== "AutoTriggered") {
          this.checkFence();
          this.s.zk.preferred_replica_election = [];
        }
      }
    }
  }

  // ReplicaLeaderElection: for an admin client's, every requested partition -> {error, leader}, what its callback
  // answers (§7.9).
  processReplicaLeaderElection(requested, type, trigger) {
    const zk = this.s.zk;
    const tps = (trigger === "ZkTriggered" ? zk.preferred_replica_election : requested).slice().sort(byPartition);
    const known = tps.filter((tp) => this.assignment(tp).replicas.length > 0);
    const live = known.filter((tp) => !this.queuedForDeletion(topicOf(tp)));
    const results = new Map();
    for (const tp of minus(tps, known)) results.set(tp, { error: "UNKNOWN_TOPIC_OR_PARTITION", leader: -1 });
    for (const tp of minus(known, live)) results.set(tp, { error: "INVALID_TOPIC_EXCEPTION", leader: -1 });
    const liveIds = new Set(this.liveOrShuttingDown().filter((b) => !this.ctx.shutting_down.includes(b)));
    const electable = live.filter((tp) => {
      const leader = this.leaderOf(tp);
      // Kafka reads the cached leadership with `.get`: a partition without one fails the event.
      if (leader === undefined) throw new EventFailed(`no leadership for ${tp}`);
      if (type === "PREFERRED") return leader !== this.assignment(tp).replicas[0];
      return leader === -1 || !liveIds.has(leader);
    });
    for (const tp of minus(live, electable)) results.set(tp, { error: "ELECTION_NOT_NEEDED", leader: -1 });
    this.electionResults = new Map();
    try {
      this.onReplicaElection(electable, type, trigger);
    } finally {
      for (const [tp, outcome] of this.electionResults) {
        if (outcome.reason === undefined) results.set(tp, { error: "NONE", leader: outcome.leader });
        else results.set(tp, { error: electionError(outcome.reason, type), leader: -1 });
      }
      this.electionResults = null;
    }
    return results;
  }

  checkAndTriggerAutoLeaderRebalance() {
    const c = this.ctx;
    const groups = new Map();
    for (const tp of this.allPartitions()) {
      if (this.queuedForDeletion(topicOf(tp))) continue;
      const ar = this.assignment(tp).replicas;
      if (ar.length === 0) continue;
      if (!groups.has(ar[0])) groups.set(ar[0], []);
      groups.get(ar[0]).push(tp);
    }
    for (const broker of Array.from(groups.keys()).sort(byId)) {
      const tps = groups.get(broker);
      const notPreferred = tps.filter((tp) => this.leadership(tp) !== undefined && this.leaderOf(tp) !== broker);
      const ratio = notPreferred.length / tps.length;
      if (ratio > this.s.config.leader_imbalance_per_broker_percentage / 100) {
        const candidates = notPreferred.filter(
          (tp) =>
            c.partitions_being_reassigned.length === 0 &&
            !this.queuedForDeletion(topicOf(tp)) &&
            c.all_topics.includes(topicOf(tp)) &&
            this.isOnline(broker, tp) &&
            this.leadership(tp).leader_and_isr.isr.includes(broker),
        );
        this.onReplicaElection(candidates, "PREFERRED", "AutoTriggered");
      }
    }
  }

  // ------------------------------------------------------------------------------------------ §7.10

  doControlledShutdown(id, brokerEpoch) {
    const c = this.ctx;
    if (brokerEpoch !== -1) {
      if (!has(c.live_brokers, id)) throw new EventFailed(`broker ${id} is unknown`, "NoSuchElementException");
      if (brokerEpoch < c.live_brokers[id]) {
        throw new EventFailed(`stale broker epoch ${brokerEpoch}`, "StaleBrokerEpochException");
      }
    }
    if (!has(c.live_brokers, id)) throw new EventFailed(`broker ${id} is not available`, "BrokerNotAvailableException");
    if (!c.shutting_down.includes(id)) c.shutting_down.push(id);
    const toActOn = this.allPartitions().filter((tp) => {
      const ar = this.assignment(tp).replicas;
      return ar.includes(id) && ar.length > 1 && this.leadership(tp) !== undefined && !this.queuedForDeletion(topicOf(tp));
    });
    const led = toActOn.filter((tp) => this.leaderOf(tp) === id);
    const followed = toActOn.filter((tp) => this.leaderOf(tp) !== id);
    this.partitionChange(led, "OnlinePartition", SHUTDOWN_STRATEGY);
    this.clearBatch();
    this.addStopReplica(
      followed.map((tp) => [tp, id]),
      false,
    );
    this.send();
    this.replicaChange(
      followed.map((tp) => replicaKey(tp, id)),
      "OfflineReplica",
    );
    return this.partitionLeadersOnBroker(id);
  }

  // partitionLeadersOnBroker(id): partitions led by id with more than one replica, topic not queued for deletion.
  partitionLeadersOnBroker(id) {
    return this.allPartitions().filter(
      (tp) =>
        this.leadership(tp) !== undefined &&
        this.leaderOf(tp) === id &&
        this.assignment(tp).replicas.length > 1 &&
        !this.queuedForDeletion(topicOf(tp)),
    );
  }

  // ------------------------------------------------------------------------------------------ §7.11

  // processAlterIsr(brokerId, brokerEpoch, {tp: proposed LeaderAndIsr}).
  processAlterIsr(brokerId, brokerEpoch, proposals) {
    const c = this.ctx;
    const zk = this.s.zk;
    if (!has(c.live_brokers, brokerId) || c.live_brokers[brokerId] !== brokerEpoch) return;
    const tps = Object.keys(proposals).sort(byPartition);
    const succeeded = [];
    try {
      const writes = {};
      for (const tp of tps) {
        const li = this.leadership(tp);
        if (li === undefined) continue;
        const p = proposals[tp];
        const cached = li.leader_and_isr;
        if (p.leader_epoch < cached.leader_epoch) continue;
        if (p.leader === cached.leader && p.leader_epoch === cached.leader_epoch && sameList(p.isr, cached.isr)) {
          succeeded.push(tp);
          continue;
        }
        writes[tp] = p;
      }
      const result = this.updateLeaderAndIsr(writes);
      // updateLeaderAndIsrCache: one ZooKeeper read of the written znodes (a CONNECTIONLOSS fault throws).
      const lost = result.written.filter((tp) => this.fault(tp) === "CONNECTIONLOSS");
      if (lost.length > 0) {
        for (const tp of lost) delete zk.faults[tp];
        throw new EventFailed("connection loss refreshing the leadership cache");
      }
      for (const tp of result.written) {
        c.leadership[tp] = structuredClone(zk.partition_states[tp]);
        succeeded.push(tp);
      }
      this.sendUpdateMetadata(this.liveOrShuttingDown(), tps);
    } catch (e) {
      // processAlterIsr catches every Throwable: UNKNOWN_SERVER_ERROR, the controller stays active.
      this.clearBatch();
      return;
    }
    for (const tp of succeeded.sort(byPartition)) {
      if (c.partitions_being_reassigned.includes(tp) && this.isReassignmentComplete(tp, this.assignment(tp))) {
        this.guarded(() => this.onPartitionReassignment(tp, this.assignment(tp)));
      }
    }
  }

  // Leaders send ISR changes as AlterIsr from IBP 2.7-IV2; below, they write the state znode and notify (§7.11).
  alterIsrEnabled() {
    return this.ibpAtLeast("KAFKA_2_7_IV2");
  }

  // maybeCompleteReassignment(tp) (§7.7.1): an exception ends the caller.
  maybeCompleteReassignment(tp) {
    if (this.isReassignmentComplete(tp, this.assignment(tp))) this.onPartitionReassignment(tp, this.assignment(tp));
  }

  // IsrChangeNotification (IBP < 2.7-IV2): one read of the notified partitions' state znodes (a CONNECTIONLOSS
  // fault throws), the cache refreshed from it, UpdateMetadata for them, maybeCompleteReassignment of those being
  // reassigned (an exception ends the loop); finally the notifications are deleted (a fenced write).
  processIsrChangeNotification() {
    const c = this.ctx;
    const zk = this.s.zk;
    const tps = zk.isr_change_notifications.slice().sort(byPartition);
    if (tps.length === 0) return;
    try {
      const lost = tps.filter((tp) => this.fault(tp) === "CONNECTIONLOSS");
      if (lost.length > 0) {
        for (const tp of lost) delete zk.faults[tp];
        throw new EventFailed("connection loss reading the notified partitions");
      }
      for (const tp of tps) {
        if (has(zk.partition_states, tp)) c.leadership[tp] = structuredClone(zk.partition_states[tp]);
      }
      this.sendUpdateMetadata(this.liveOrShuttingDown(), tps);
      for (const tp of tps.filter((tp) => c.partitions_being_reassigned.includes(tp))) {
        this.maybeCompleteReassignment(tp);
      }
    } finally {
      this.checkFence();
      zk.isr_change_notifications = minus(zk.isr_change_notifications, tps);
    }
  }

  // ------------------------------------------------------------------------------------------ §7.5

  processLeaderAndIsrResponse(broker, online, storageErrors) {
    const c = this.ctx;
    const previous = c.offline_replicas.filter((pr) => Number(pr.slice(pr.lastIndexOf("/") + 1)) === broker);
    const after = uniq(minus(previous, online.map((tp) => replicaKey(tp, broker))).concat(storageErrors.map((tp) => replicaKey(tp, broker))));
    const fresh = after.filter((pr) => !previous.includes(pr));
    c.offline_replicas = c.offline_replicas.filter((pr) => !previous.includes(pr)).concat(after);
    if (fresh.length > 0) this.onReplicasBecomeOffline(fresh);
  }
}

module.exports = {
  answer,
  WHOLE_REQUEST,
  Controller,
  NotEnabled,
  EventFailed,
  IllegalState,
  emptyContext,
  byPartition,
  byName,
  byId,
  has,
  uniq,
  minus,
};
