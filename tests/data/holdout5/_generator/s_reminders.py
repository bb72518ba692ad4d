"""Veterinary practices: vaccination reminders stopped. reminder-dispatcher (one replica,
Recreate strategy, the only consumer of the reminders queue) was rebuilt on a distroless
base image in 5.0.0; its Deployment still runs `/bin/sh -c "exec java ..."`, and the new
image has no shell. Every start fails in the runtime (StartError, exit 128, "/bin/sh: no
such file or directory"), the pod is in CrashLoopBackOff and the queue grows.
Red herrings: SMS gateway 429 warnings from the previous pod, a RabbitMQ memory alarm
warning, the booking-api's old restart."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import (
    NodeKind,
    deleted,
    kills,
    restarts_series,
    runs_from,
)
from tests.data.holdout3._generator.kit3 import chatter, log_pod, namespaces, quiet, steady
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, Template, http_probe
from tests.scenario_tools.sim import container_status, restart_events

from .kit5 import Incident, provider_nodes

ID = "pet-vaccination-reminders-silent"
NOW = datetime.fromisoformat("2027-04-14T09:52:00+00:00")
NS = "petcare"
REG = "registry.mgc.example/vetline"
MSG = ('failed to create containerd task: failed to create shim task: OCI runtime create '
       'failed: runc create failed: unable to start container process: error during '
       'container init: exec: "/bin/sh": stat /bin/sh: no such file or directory: unknown')


def _ctr(version: str) -> Ctr:
    return Ctr("reminder-dispatcher", f"{REG}/reminder-dispatcher:{version}", port=8080,
               requests={"cpu": "200m", "memory": "512Mi"}, limits={"memory": "768Mi"},
               command=["/bin/sh", "-c"],
               args=["exec java $JAVA_OPTS -jar /app/reminder-dispatcher.jar"],
               env={"JAVA_OPTS": "-XX:MaxRAMPercentage=70", "AMQP_QUEUE": "reminders.due",
                    "SMS_PROVIDER": "textwave"},
               readiness=http_probe("/health/ready", delay=20))


def build() -> Incident:
    s = Incident(
        id=ID, title="Vaccination reminders not sent", now=NOW,
        report="""\
Several clinics called: pet owners have not received any vaccination or check-up reminders
(SMS or email) this morning. Yesterday they went out fine. The booking site itself works.
""",
        truth=truth(
            "crash_loop", "Deployment", NS, "reminder-dispatcher",
            ["CrashLoopBackOff", "StartError", "/bin/sh", "no such file or directory"],
            "reminder-dispatcher 5.0.0 is built on a distroless base image without a shell, "
            "but the Deployment still runs command /bin/sh -c 'exec java ...': every start "
            "fails (StartError, exit 128) and the pod crash-loops, so nobody consumes the "
            "reminders queue. Change the command to the image's java entrypoint (or drop "
            "command/args) or roll back to 4.9.3."))
    set_times(s, 2.5, 30)
    c = s.cluster
    namespaces(s, {"default": 800, "kube-system": 800, NS: 640, "messaging": 600})
    kind = NodeKind("BV4-16-100", "4", "16365608Ki", "3860m", "14220328Ki", "v1.29.9",
                    "6.8.0-47-generic", "Ubuntu 24.04.1 LTS")
    nodes = provider_nodes(s, "magalu", 3, kind, days=6.2)
    rollout = NOW - timedelta(minutes=47, seconds=12)
    old_ctr, new_ctr = _ctr("4.9.3"), _ctr("5.0.0")
    work = c.workload("Deployment", NS, "reminder-dispatcher",
                      Template([new_ctr], service_account="reminder-dispatcher"), replicas=1,
                      created=s.ago(days=380),
                      extra_spec={"strategy": {"type": "Recreate"}})
    old_rs = c.revision(work, 17, s.ago(days=6, hours=20),
                        Template([old_ctr], service_account="reminder-dispatcher"))
    new_rs = c.revision(work, 18, rollout, replicas=1)
    old_name = f"{old_rs['metadata']['name']}-{c.token(5)}"
    ghost = deleted(s, NS, old_name, nodes[0]["metadata"]["name"], s.ago(days=6, hours=20),
                    rollout - timedelta(seconds=2))
    born = rollout + timedelta(seconds=33)
    name = f"{new_rs['metadata']['name']}-{c.token(5)}"
    runs = runs_from(born + timedelta(seconds=5), NOW, lambda t: 0.05, pull=0.2,
                     jitter=lambda: s.rng.uniform(0, 0.7))
    state = container_status(runs, name, NS, "reminder-dispatcher", reason="StartError",
                             code=128, uid=c.uid("Pod", NS, name), message=MSG, ready=False)
    pod = c.pod(work, new_rs, node=nodes[1], created=born, name=name,
                statuses={"reminder-dispatcher": state})
    work.availability_changed = rollout
    work.progressing = ("ProgressDeadlineExceeded", f'ReplicaSet "{new_rs["metadata"]["name"]}"'
                        " has timed out progressing.", born + timedelta(minutes=10))
    c.event(work.obj, "ScalingReplicaSet", f"Scaled down replica set "
            f"{old_rs['metadata']['name']} from 1 to 0", first=rollout,
            component="deployment-controller")
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set "
            f"{new_rs['metadata']['name']} from 0 to 1", first=born - timedelta(seconds=0.5),
            component="deployment-controller")
    c.event(new_rs, "SuccessfulCreate", f"Created pod: {name}", first=born,
            component="replicaset-controller")
    c.event(pod, "Scheduled", f"Successfully assigned {NS}/{name} to "
            f"{nodes[1]['metadata']['name']}", first=born, component="default-scheduler",
            host="")
    fp = "spec.containers{reminder-dispatcher}"
    c.event(pod, "Pulling", f'Pulling image "{new_ctr.image}"', first=born +
            timedelta(seconds=1), field_path=fp)
    c.event(pod, "Pulled", f'Successfully pulled image "{new_ctr.image}" in 3.402s (3.402s '
            'including waiting). Image size: 98211640 bytes.', first=runs[0].start -
            timedelta(seconds=0.6), field_path=fp)
    restart_events(s, pod, "reminder-dispatcher", runs, now=NOW, image=new_ctr.image)
    c.event(pod, "Failed", f"Error: {MSG}", first=runs[0].start, last=runs[-1].start,
            count=len(runs), type_="Warning", field_path=fp)
    restarts_series(s, pod, "reminder-dispatcher", 0, kills(runs))
    gauge(s, "kube_pod_container_status_waiting_reason",
          {"namespace": NS, "pod": name, "container": "reminder-dispatcher",
           "reason": "CrashLoopBackOff"}, lambda t: 1.0 if t > runs[2].start.timestamp()
          else 0.0, "Describes the reason the container is currently in waiting state.",
          times=[t for t in s.times if t >= born.timestamp() + 25])
    log_pod(s, ghost, "reminder-dispatcher", "reminder-dispatcher", [
        ("info", "reminder sent: RABIES booster for patient 88213 via sms (clinic VET-0412)", {}),
        ("warn", "textwave SMS API answered 429 Too Many Requests, retrying in 2s", {}),
        ("info", "consumed 40 messages from reminders.due in 1.8s", {}),
    ], 140)
    gauge(s, "rabbitmq_queue_messages_ready", {"namespace": "messaging",
                                               "queue": "reminders.due", "vhost": "vetline"},
          lambda t: 40 + 3 * s.rng.random() if t < rollout.timestamp() else
          40 + (t - rollout.timestamp()) * 1.9, "Messages ready to be delivered to consumers.")
    mq = Ctr("rabbitmq", f"{REG}/rabbitmq:3.13.7-management", port=5672, port_name="amqp",
             requests={"cpu": "500m", "memory": "1Gi"}, limits={"memory": "1Gi"})
    _, mqs = steady(s, "messaging", "rabbitmq", [mq], nodes=nodes, replicas=1, revision=7,
                    rollout=s.ago(days=5, hours=1), service=5672, target="amqp", offset=2)
    quiet(s, mqs, "rabbitmq", 610)
    chatter(s, mqs, "rabbitmq", "rabbitmq", [
        ("warn", "memory resource limit alarm set on node rabbit@rabbitmq-0 (high watermark "
         "0.4) - cleared after 3s", {}),
        ("info", "accepting AMQP connection 10.64.1.23:41822 -> 10.64.2.14:5672", {}),
        ("info", "closing AMQP connection <0.4412.0> (10.64.1.23:41822, vhost: 'vetline')", {}),
    ], 50)
    bk = Ctr("booking-api", f"{REG}/booking-api:12.1.0", port=8080,
             requests={"cpu": "300m", "memory": "512Mi"}, limits={"memory": "768Mi"},
             readiness=http_probe("/health/ready"))
    _, bks = steady(s, NS, "booking-api", [bk], nodes=nodes, replicas=2, revision=64,
                    rollout=s.ago(days=3, hours=5),
                    restarted={0: (s.ago(days=2, hours=2), "OOMKilled", 137)})
    quiet(s, bks, "booking-api", 480)
    chatter(s, bks, "booking-api", "booking-api", [
        ("info", "appointment booked clinic VET-0412 slot 2027-04-15T10:30", {}),
        ("warn", "slow call to clinic PMS adapter 1420ms", {}),
    ], 90)
    return s
