"""Food bank network: the morning volunteer shift rotas were not emailed. The CronJob
rota-mailer runs daily at 05:30, renders one PDF rota per depot into its scratch volume
(PVC rota-scratch, 4Gi) and mails them. Old render directories were never cleaned up and the
volume has crept to 99% full; today's run (more depots since the spring drive) runs out of
space while rendering ("No space left on device", errno 28) and exits 1. Each of the three
attempts (backoffLimit 2) dies at the same point and the Job failed. Resource exhaustion
(disk space) of the CronJob, visible in its logs and in kubelet_volume_stats. Red herrings:
volunteer-portal 4.12.0 rolled out 41 min before the first failure in the same namespace,
a donor-receipts CronJob whose run needed one retry after an SMTP 421, a loud WARN about the
SMTP relay certificate expiring in 12 days in the rota-mailer log itself."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout2._generator.kit import pvc, requests, working_set
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.data.holdout4._generator.kit4 import log_lines
from tests.data.holdout5._generator.kit5 import cronjob, job, never_restart
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, Template, ended, http_probe, iso

from .kit17 import Incident, eks_nodes, gauge, line

ID = "volunteer-rotas-not-sent"
NOW = datetime.fromisoformat("2028-05-09T06:14:00+00:00")
NS = "foodbank"
REG = "ghcr.io/northfoodshare"
GIB = 1024 ** 3
CAP = 4 * GIB


def _done(when: datetime) -> dict:
    return {"type": "Complete", "status": "True", "reason": "CompletionsReached",
            "message": "Reached expected number of succeeded pods",
            "lastProbeTime": iso(when), "lastTransitionTime": iso(when)}


def build() -> Incident:
    s = Incident(
        id=ID, title="Volunteer shift rotas not emailed this morning", now=NOW,
        report="""\
Depot leads say nobody got today's volunteer rota email, it usually lands around 05:45.
Volunteers are turning up and asking where they're meant to be. Donor receipt emails went
out fine so I don't think it's Mailgun... or is it? Portal seems up.
""",
        truth=truth(
            "resource_exhaustion", "CronJob", NS, "rota-mailer",
            ["No space left on device", "rota-scratch", "BackoffLimitExceeded",
             "kubelet_volume_stats_available_bytes"],
            "Today's rota-mailer Job failed: every attempt runs out of disk space on its "
            "scratch volume rota-scratch (4Gi, 99% full from months of render directories "
            "never cleaned up) while rendering the depot PDFs, exits 1 with 'No space left on "
            "device', and the Job hit its backoff limit. Delete the old render directories "
            "(or expand the PVC and add a cleanup step), then re-run the job with kubectl "
            "create job --from=cronjob/rota-mailer."))
    s.hours = 2.0
    c = s.cluster
    namespaces(s, {"default": 390, "kube-system": 390, NS: 371, "monitoring": 371})
    nodes = eks_nodes(s, 3, region="eu-west-2", subnet=44, pool="general-t3a",
                      instance="t3a.xlarge", kubelet="v1.31.13-eks-113cf36",
                      kernel="6.1.150-174.273.amzn2023.x86_64",
                      os_image="Amazon Linux 2023.9.20251014", cpu="4", memory="16101244Ki",
                      alloc_cpu="3920m", alloc_memory="15078268Ki", days=5.2)
    pvc(s, NS, "rota-scratch", "4Gi", "gp3", created=s.ago(days=240),
        node_name=nodes[1]["metadata"]["name"], provisioner="ebs.csi.aws.com",
        labels={"app.kubernetes.io/name": "rota-mailer"})
    app = Ctr("rota-mailer", f"{REG}/rota-mailer:2.3.7", port=None,
              requests={"cpu": "500m", "memory": "512Mi"}, limits={"memory": "1Gi"},
              env={"SCRATCH_DIR": "/var/lib/rota", "SMTP_HOST": "smtp.eu.mailgun.org",
                   "ROTA_DAY": "today", "DEPOTS": "all"},
              command=["python", "-m", "rota_mailer"], args=["run", "--send"],
              mounts=[{"name": "scratch", "mountPath": "/var/lib/rota"}])
    labels = {"app.kubernetes.io/name": "rota-mailer"}
    vols = [{"name": "scratch", "persistentVolumeClaim": {"claimName": "rota-scratch"}}]

    def tpl() -> Template:
        return Template([app], service_account="rota-mailer", labels=dict(labels),
                        volumes=list(vols), node_selector={
                            "topology.kubernetes.io/zone": "eu-west-2b"})
    sched = NOW.replace(hour=5, minute=30, second=0)
    cron = cronjob(s, NS, "rota-mailer", tpl(), schedule="30 5 * * *",
                   created=s.ago(days=240), last=sched)
    cron["spec"]["jobTemplate"]["spec"]["backoffLimit"] = 2
    yday = sched - timedelta(days=1)
    cron["status"]["lastSuccessfulTime"] = iso(yday + timedelta(minutes=9, seconds=41))
    home = nodes[1]
    done = job(s, cron, yday, tpl())
    done.obj["spec"]["backoffLimit"] = 2
    y0, y1 = yday + timedelta(seconds=4), yday + timedelta(minutes=9, seconds=40)
    ypod = c.pod(done, None, node=home, created=yday + timedelta(seconds=1),
                 phase="Succeeded", statuses={"rota-mailer": {
                     "state": ended("Completed", 0, y0, y1), "ready": False,
                     "started": False, "restartCount": 0, "lastState": {}}})
    never_restart([ypod])
    done.obj["status"] = {
        "conditions": [{**_done(y1 + timedelta(seconds=1)), "type": "SuccessCriteriaMet"},
                       _done(y1 + timedelta(seconds=1))],
        "succeeded": 1, "ready": 0, "startTime": iso(yday + timedelta(seconds=1)),
        "completionTime": iso(y1 + timedelta(seconds=1)), "terminating": 0,
        "uncountedTerminatedPods": {}}

    work = job(s, cron, sched, tpl())
    work.obj["spec"]["backoffLimit"] = 2
    jname = work.obj["metadata"]["name"]
    begin, lives, pods = sched + timedelta(seconds=1), [], []
    for k, delay in enumerate((10, 20, 0)):
        a = begin + timedelta(seconds=3.4 + k * 0.3)
        b = a + timedelta(seconds=s.rng.uniform(492, 515))
        pod = c.pod(work, None, node=home, created=begin, phase="Failed",
                    statuses={"rota-mailer": {"state": ended("Error", 1, a, b), "ready": False,
                                              "started": False, "restartCount": 0,
                                              "lastState": {}}})
        never_restart([pod])
        pods.append(pod)
        lives.append((begin, a, b))
        begin = b + timedelta(seconds=delay + s.rng.uniform(0.4, 1.5))
    failed_at = lives[-1][2] + timedelta(seconds=1)
    work.obj["status"] = {
        "conditions": [
            {"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded",
             "message": "Job has reached the specified backoff limit",
             "lastProbeTime": iso(failed_at), "lastTransitionTime": iso(failed_at)},
            {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
             "message": "Job has reached the specified backoff limit",
             "lastProbeTime": iso(failed_at), "lastTransitionTime": iso(failed_at)}],
        "failed": 3, "ready": 0, "startTime": iso(sched + timedelta(seconds=1)),
        "terminating": 0, "uncountedTerminatedPods": {}}
    c.event(cron, "SuccessfulCreate", f"Created job {jname}", first=sched,
            component="cronjob-controller", host="")
    c.event(cron, "SawCompletedJob", f"Saw completed job: {jname}, status: Failed",
            first=failed_at + timedelta(seconds=1), component="cronjob-controller", host="")
    c.event(work.obj, "BackoffLimitExceeded", "Job has reached the specified backoff limit",
            first=failed_at, type_="Warning", component="job-controller", host="")
    fp = "spec.containers{rota-mailer}"
    for pod, (born, a, b) in zip(pods, lives, strict=True):
        name = pod["metadata"]["name"]
        c.event(work.obj, "SuccessfulCreate", f"Created pod: {name}", first=born,
                component="job-controller", host="")
        c.event(pod, "Scheduled", f"Successfully assigned {NS}/{name} to "
                f"{home['metadata']['name']}", first=born, component="default-scheduler",
                host="")
        c.event(pod, "Pulled", f'Container image "{app.image}" already present on machine',
                first=a - timedelta(seconds=0.6), field_path=fp)
        c.event(pod, "Created", "Created container: rota-mailer",
                first=a - timedelta(seconds=0.2), field_path=fp)
        c.event(pod, "Started", "Started container rota-mailer", first=a, field_path=fp)
        span = (b - a).total_seconds()
        depots = [("D-014 Harehills", 0.18), ("D-022 Chapeltown", 0.31),
                  ("D-031 Armley", 0.47), ("D-047 Beeston", 0.63), ("D-052 Seacroft", 0.79)]
        text = [(a + timedelta(seconds=0.8), "INFO  rota_mailer.run: rota day 2028-05-09, "
                 "63 depots, 1 482 shifts, scratch=/var/lib/rota"),
                (a + timedelta(seconds=2.1), "WARN  rota_mailer.smtp: relay certificate for "
                 "smtp.eu.mailgun.org expires in 12 days (2028-05-21T00:00:00Z)"),
                (a + timedelta(seconds=6.5), "INFO  rota_mailer.render: writing to "
                 f"/var/lib/rota/renders/2028-05-09-{k_of(pods, pod)}")]
        text += [(a + timedelta(seconds=span * f), f"INFO  rota_mailer.render: depot {d} "
                  f"rota rendered ({int(30 + 70 * f)} shifts)") for d, f in depots]
        text += [(b - timedelta(seconds=1.4), "ERROR rota_mailer.render: depot D-058 Gipton: "
                  "OSError: [Errno 28] No space left on device: '/var/lib/rota/renders/"
                  f"2028-05-09-{k_of(pods, pod)}/D-058/rota.pdf'"),
                 (b - timedelta(seconds=0.9), "ERROR rota_mailer.run: aborting before send, "
                  "0 of 63 rota emails sent"),
                 (b - timedelta(seconds=0.3), "INFO  rota_mailer.run: exit status 1")]
        log_lines(s, pod, "rota-mailer", text)
        for when, msg in text:
            level = msg.split()[0].lower()
            line(s, pod, "rota-mailer", "rota-mailer", when, "warn" if level == "warn" else
                 level, msg.split(": ", 1)[1], **({"error.type": "OSError"} if "Errno" in msg
                                                   else {}))
        times = [t for t in s.times if a.timestamp() + 15 <= t <= b.timestamp()]
        working_set(s, pod, "rota-mailer", lambda t, a=a: (180 + 0.5 * (t - a.timestamp()))
                    * MIB, times=times)
    gauge(s, "kube_job_status_failed", {"namespace": NS, "job_name": jname},
          lambda t: float(sum(1 for _, _, b in lives if b.timestamp() + 20 <= t)),
          "The number of pods which reached Phase Failed.",
          times=[t for t in s.times if t >= sched.timestamp()])
    gauge(s, "kube_cronjob_status_last_successful_time", {"namespace": NS,
                                                          "cronjob": "rota-mailer"},
          lambda t: float(int((yday + timedelta(minutes=9, seconds=41)).timestamp())),
          "LastSuccessfulTime keeps information of when was the last time the job was "
          "successfully completed.")
    base_used = CAP - 27.5 * MIB

    def used(t: int) -> float:
        for _, a, b in lives:
            if a.timestamp() <= t <= b.timestamp():
                share = (t - a.timestamp()) / (b.timestamp() - a.timestamp())
                return min(CAP - 0.2 * MIB, base_used + share * 29 * MIB)
        return base_used + (t % 7) * 4096
    vol = {"namespace": NS, "persistentvolumeclaim": "rota-scratch"}
    gauge(s, "kubelet_volume_stats_capacity_bytes", vol, lambda t: float(CAP),
          "[ALPHA] Capacity in bytes of the volume")
    gauge(s, "kubelet_volume_stats_used_bytes", vol, lambda t: float(round(used(t))),
          "[ALPHA] Number of used bytes in the volume")
    gauge(s, "kubelet_volume_stats_available_bytes", vol, lambda t: float(round(CAP - used(t))),
          "[ALPHA] Number of available bytes in the volume")

    # ---- red herrings: portal rollout, donor-receipts needing a retry
    roll = lives[0][2] - timedelta(minutes=41)
    portal = Ctr("volunteer-portal", f"{REG}/volunteer-portal:4.12.0", port=3000,
                 requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "512Mi"},
                 readiness=http_probe("/api/ready", delay=10))
    _, portals = steady(s, NS, "volunteer-portal", [portal], nodes=nodes, replicas=2,
                        revision=131, rollout=roll, service=80,
                        old=(130, s.ago(days=6), [Ctr("volunteer-portal",
                                                      f"{REG}/volunteer-portal:4.11.3")]))
    quiet(s, portals, "volunteer-portal", 330)
    for pod in portals:
        requests(s, pod, "volunteer-portal", rps=lambda t: 0.8, codes={
            "200": lambda t: 0.985, "304": lambda t: 0.01, "401": lambda t: 0.005})
    chatter(s, portals, "volunteer-portal", "volunteer-portal", [
        ("info", "GET /api/shifts?depot=D-031 200 41ms", {}),
        ("info", "volunteer V-30112 signed up for shift S-2028-05-10-D014-AM", {}),
        ("warn", "rota for 2028-05-09 not published yet, showing 2028-05-08", {}),
        ("warn", "session store: slow SET 212ms", {}),
    ], 60)
    rapp = Ctr("donor-receipts", f"{REG}/donor-receipts:1.8.1", port=None,
               requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"},
               command=["python", "-m", "receipts"], args=["send", "--since", "24h"])
    rl = {"app.kubernetes.io/name": "donor-receipts"}
    rcron = cronjob(s, NS, "donor-receipts", Template([rapp], service_account="donor-receipts",
                                                       labels=dict(rl)),
                    schedule="15 5 * * *", created=s.ago(days=200), last=sched)
    rs_ = sched - timedelta(minutes=15)
    rjob = job(s, rcron, rs_, Template([rapp], service_account="donor-receipts",
                                       labels=dict(rl)))
    p1a, p1b = rs_ + timedelta(seconds=4), rs_ + timedelta(seconds=71)
    p2a = p1b + timedelta(seconds=13)
    p2b = p2a + timedelta(seconds=96)
    f1 = c.pod(rjob, None, node=nodes[0], created=rs_ + timedelta(seconds=1), phase="Failed",
               statuses={"donor-receipts": {"state": ended("Error", 1, p1a, p1b),
                                            "ready": False, "started": False,
                                            "restartCount": 0, "lastState": {}}})
    f2 = c.pod(rjob, None, node=nodes[2], created=p1b + timedelta(seconds=11),
               phase="Succeeded", statuses={"donor-receipts": {
                   "state": ended("Completed", 0, p2a, p2b), "ready": False,
                   "started": False, "restartCount": 0, "lastState": {}}})
    never_restart([f1, f2])
    rjob.obj["status"] = {
        "conditions": [{**_done(p2b + timedelta(seconds=1)), "type": "SuccessCriteriaMet"},
                       _done(p2b + timedelta(seconds=1))],
        "failed": 1, "succeeded": 1, "ready": 0, "startTime": iso(rs_ + timedelta(seconds=1)),
        "completionTime": iso(p2b + timedelta(seconds=1)), "terminating": 0,
        "uncountedTerminatedPods": {}}
    rcron["status"]["lastSuccessfulTime"] = iso(p2b + timedelta(seconds=1))
    rname = rjob.obj["metadata"]["name"]
    c.event(rcron, "SuccessfulCreate", f"Created job {rname}", first=rs_,
            component="cronjob-controller", host="")
    c.event(rcron, "SawCompletedJob", f"Saw completed job: {rname}, status: Complete",
            first=p2b + timedelta(seconds=2), component="cronjob-controller", host="")
    c.event(rjob.obj, "Completed", "Job completed", first=p2b + timedelta(seconds=1),
            component="job-controller", host="")
    for pod, born in ((f1, rs_ + timedelta(seconds=1)), (f2, p1b + timedelta(seconds=11))):
        c.event(rjob.obj, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}",
                first=born, component="job-controller", host="")
    log_lines(s, f1, "donor-receipts", [
        (p1a + timedelta(seconds=1), "INFO  receipts: 214 gift-aid receipts to send"),
        (p1b - timedelta(seconds=2), "ERROR receipts: SMTP 421 4.7.0 Try again later "
         "(smtp.eu.mailgun.org), giving up after 3 attempts"),
        (p1b - timedelta(seconds=1), "INFO  receipts: exit status 1")])
    log_lines(s, f2, "donor-receipts", [
        (p2a + timedelta(seconds=1), "INFO  receipts: 214 gift-aid receipts to send"),
        (p2b - timedelta(seconds=1), "INFO  receipts: 214 sent, 0 failed")])
    line(s, f1, "donor-receipts", "donor-receipts", p1b - timedelta(seconds=2), "error",
         "SMTP 421 4.7.0 Try again later (smtp.eu.mailgun.org), giving up after 3 attempts")
    line(s, f2, "donor-receipts", "donor-receipts", p2b - timedelta(seconds=1), "info",
         "214 sent, 0 failed")
    return s


def k_of(pods: list, pod: dict) -> int:
    return next(i for i, p in enumerate(pods) if p is pod) + 1 if pod in pods else len(pods) + 1
