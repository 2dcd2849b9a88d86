#!/usr/bin/python3
"""Differential test against the real Slurm: every batch script of the shared corpus and
examples, and cases of our own, is submitted to Debian's Slurm 22.05 (slurmctld on loopback,
no slurmd, so nothing runs) and, held, to a Cohort local instance of the same shape. Both must
make the same decision (accept or refuse); where both accept, the fields Slurm's `scontrol
show job` derives must equal Cohort's `show job --json`. sinfo's formats that scripts parse,
and `scontrol show lic`, must print the same text; -V, --version and an unknown option must
get the same kind of answer. Every
difference must be one of the deliberate ones listed in DELIBERATE below, each with its
reason, and each listed one must still occur.

usage: slurm_differential.py BIN_DIR [--report FILE]
Exits 77 (skipped) when not root or when Slurm, MUNGE or the shared data are missing.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SKIP = 77
REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "data"
CORPUS = SHARED / "sbatch-corpus"
EXAMPLES = SHARED / "sbatch-examples"
TOPOLOGY = REPO / "tests" / "data" / "topologies" / "hwloc-nvidiaDGX2.xml"

NODES = 8
CPUS = 128
# The partitions and QoS the corpus's sites name, so that what is compared is the rest.
PARTITIONS = ["fast", "gpu", "CPU", "E5-GPU", "Lake-short", "batch", "general-compute",
              "gpu-a100", "normal", "standard", "work", "workq", "a100_nvlink", "mit_normal_gpu"]
QOS = ["normal", "dlav", "besteffort", "debug", "general-compute", "reservation", "short+",
       "standard", "debug_preempt", "preempt", "primary", "regular"]
FEATURES = {"node[1-4]": ["gpu", "V100", "80g"], "node[5-8]": ["gpu", "hpcf2009", "wm"]}
LICENSES = {"SCRATCH": 10, "perfreport": 64, "matlab": 1}
# Countable generic resources per node besides the GPUs (Slurm's Gres=nvme:N).
GRES = {"node[1-4]": {"nvme": 20}, "node[5-8]": {"nvme": 40}}

# How the corpus's NOTES.md says each script is submitted, where it takes arguments.
CORPUS_ARGS = {
    "biowulf-align.sh": (["--mem=1g", "--time=5", "--job-name=RUN.align",
                          "--output=log/RUN.align.N"], ["IN.fastq", "bam/N.bam"]),
    "hpcnow-VASP-iomkl.sl": (["--ntasks=16", "--nodes=1-2", "-C", "wm"], []),
    "ctnvae-train_multi_node_preempt.sh": (["-A", "ALLOC", "-N", "2", "-n", "2",
                                            "--time=24:00:00"], ["8", "/p", "1", "10", "5", "x",
                                                                 "y", "2", "0", "n", "t", "m"]),
    "megatron-sc21-SRUN.sh": (["-p", "batch", "-A", "ACCT", "--job-name=NAME", "--nodes=2",
                               "--export=MEGATRON_CODE_DIR,MEGATRON_PARAMS,DOCKER_MOUNT_DIR"],
                              []),
    "umbc-ccast-test_job.sh": (["--array=1-4"], []),
    "pittcrc-launch_8x_nvlink.sh": ([], ["exp1"]),
    "awsome-deepspeed-finetune_llama.sbatch": ([], []),
    "megatron-modelopt-sbatch.sh": ([], ["SCRIPT.sh"]),
}

# Cases of our own: options on a `--wrap` job.
OWN_CASES = [
    ["-n1"], ["--exclusive"], ["--exclusive=user"], ["-s"], ["-w", "node[1-2]"],
    ["-w", "node[1-2]", "-n1"], ["-N1", "-w", "node[1-2]"], ["-N", "3", "-w", "node3"],
    ["-w", "node9"], ["-x", "node9"], ["-x", "node2"], ["-C", "gpu&V100"], ["-C", "nope"],
    ["-C", "[80g|hpcf2009]", "-N", "4"], ["-C", "[80g|hpcf2009]", "-N", "6"],
    ["-C", "80g|hpcf2009", "-N", "6"], ["-C", "gpu*2", "-N3"], ["-C", "(80g|wm)&gpu"],
    ["--prefer", "wm"], ["-L", "matlab"], ["-L", "matlab:2"], ["-L", "fluent"],
    ["-L", "SCRATCH:3,perfreport:56"], ["--mem=0"], ["--mem-per-cpu=100", "--mem=1G"],
    ["--mem-per-cpu=2G", "-n", "4"], ["--mem=2000000000"], ["-O", "-n", "1000"],
    ["--mincpus", "200"], ["--mincpus", "16", "-N2"], ["-p", "debug,gpu"], ["-p", "gpu,nope"],
    ["--hint=nomultithread", "-c", "4"], ["--wckey=x"], ["--time-min=10", "-t", "60"],
    ["-n", "384"], ["-N4", "--ntasks-per-node=8", "-c", "12"], ["--gpus-per-node=8", "-N2"],
    ["--gres=gpu:v100:4"], ["--gres=gpu:a100:4"], ["--gpus-per-task=1", "-n", "8",
                                                   "--cpus-per-gpu=16"],
    ["-N", "20"], ["-c", "200"], ["-p", "nope"], ["--reservation=foo"],
    ["--array=0-99%10"], ["-t", "1:99:99:99"], ["--wait-all-nodes=1"], ["--no-requeue"],
    ["--mail-type=END,FAIL", "--mail-user=a@b.org"], ["--comment=sweep 3"],
    ["-D", "/tmp"], ["-o", "out-%x-%j.log", "-e", "err-%j.log"], ["--open-mode=append"],
    ["--signal=B:USR1@120"], ["--profile=all", "--acctg-freq=30"], ["--spread-job"],
    ["--ntasks-per-core=1", "-n", "4"], ["--threads-per-core=1"], ["-J", "named job"],
    ["--nice=100"], ["--exclusive", "--oversubscribe"], ["--hint=bogus"],
    ["--gres=nvme:10"], ["--gres=nvme"], ["--gres=nvme:40", "-N", "4"],
    ["--gres=nvme:40", "-N", "5"], ["--gres=nvme:50"], ["--gres=fpga:1"],
    ["--gres=gpu:v100:2,nvme:5"], ["--gpus-per-node=2", "--gres=nvme:5"],
]

# sinfo forms whose output must be the same text on both (the nodes' states differ: Slurm's
# have no slurmd), where scripts parse it.
SINFO_CASES = [
    ["-h", "-o", "%D"],
    ["-o", "%P %.5a %.10l %.6D %N"],
    ["-h", "-o", "%R|%D|%c|%m|%G"],
]

# scontrol show forms whose text must be the same on both (no job runs on either, so no
# license is in use).
SCONTROL_CASES = [["show", "lic"], ["show", "licenses", "matlab"], ["show", "license", "fluent"]]

# Slurm's client commands, each asked its version and given an option it does not know:
# scripts test `sbatch --version` to learn what they run under. sreport is left out: without
# slurmdbd it answers neither.
USAGE_COMMANDS = ["sbatch", "srun", "salloc", "squeue", "scancel", "sinfo", "sacct", "scontrol",
                  "sprio", "sshare"]
USAGE_CASES = [["-V"], ["--version"], ["--bogus"]]

# Differences kept on purpose, by case name, with why. Each must still occur.
DELIBERATE = {
    "scontrol show license fluent":
        "a license that does not exist: Slurm 22.05 prints nothing and exits 0; Cohort says so "
        "in one line on stderr, naming the licenses there are, and exits 1 (stdout is empty on "
        "both)",
    "corpus/baskerville-7b-MoreResources.sh":
        "decision: the QoS 'FIX_THIS' does not exist. Cohort checks QoS names always; Slurm "
        "without accounting storage accepts any name",
    "examples/06-dependency.sh":
        "decision: afterok on jobs 1001-1003, which never existed. Cohort keeps every job it "
        "ran and refuses a dependency on an id it never gave; Slurm 22.05 takes a missing job "
        "as long finished",
    "corpus/hpcnow-VASP-iomkl.sl":
        "field NumNodes: for -N 1-2, Slurm 22.05 shows a pending job's node count as its "
        "maximum (2-2); Cohort keeps the range and places the job on as few nodes as fit",
}


def run(argv, env=None, cwd=None, timeout=30, check=False):
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)
    if check and proc.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc


def wait_for(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


class Cohort:
    """A local instance of NODES emulated DGX-2 nodes with CPUS CPUs each."""

    def __init__(self, bin_dir, work):
        self.cohort = str(Path(bin_dir).resolve() / "cohort")
        self.state = work / "cohort-state"
        settings = {
            "cluster_name": "cohort",
            "partitions": [{"name": "debug", "nodes": f"node[1-{NODES}]", "default": True}]
            + [{"name": p, "nodes": f"node[1-{NODES}]"} for p in PARTITIONS],
            "qos": [{"name": q} for q in QOS],
            "node_features": FEATURES,
            "licenses": LICENSES,
            "node_gres": GRES,
        }
        self.settings = work / "cohort-settings.json"
        self.settings.write_text(json.dumps(settings))
        self.env = dict(os.environ)

    def start(self):
        started = run([self.cohort, "start", "--nodes", str(NODES), "--state-dir",
                       str(self.state), "--topology", str(TOPOLOGY), "--cpus", str(CPUS),
                       "--settings", str(self.settings)], timeout=120, check=True)
        self.env["COHORT_CONF"] = started.stdout.strip().split("=", 1)[1]
        if not wait_for(lambda: len(self.nodes()) == NODES, 60):
            raise RuntimeError("cohort: not every node registered")

    def stop(self):
        run([self.cohort, "stop", "--state-dir", str(self.state)], timeout=60)

    def nodes(self):
        listed = run([self.cohort, "nodes", "--json"], env=self.env)
        try:
            return [n for n in json.loads(listed.stdout)["nodes"] if n["cpus"] > 0]
        except (ValueError, KeyError):
            return []

    def submit(self, args, cwd):
        return run([self.cohort, "batch", "--parsable", "-H"] + args, env=self.env, cwd=cwd)

    def sinfo(self, args):
        return run([self.cohort, "nodes"] + args, env=self.env)

    def scontrol(self, args):
        return run([self.cohort, "scontrol"] + args, env=self.env)

    def as_slurm(self, name, args):
        # The multi-call binary under Slurm's name, as the compat links call it.
        proc = subprocess.run([name] + args, executable=self.cohort, env=self.env,
                              capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        return proc

    def job(self, job_id):
        shown = run([self.cohort, "show", "job", job_id, "--json"], env=self.env)
        return json.loads(shown.stdout)["jobs"][0]


class Slurm:
    """munged and slurmctld on loopback ports of their own; no slurmd, so no job runs."""

    def __init__(self, work, node_memory_mib, gpus, gpu_type):
        self.dir = work / "slurm"
        for sub in ("etc", "state", "spool", "log", "munge", "run"):
            (self.dir / sub).mkdir(parents=True)
        self.socket = self.dir / "munge" / "munge.socket.2"
        self.conf = self.dir / "etc" / "slurm.conf"
        self.procs = []
        nodes = []
        for hosts, features in FEATURES.items():
            generic = ",".join(f"{name}:{count}" for name, count in GRES[hosts].items())
            nodes.append(f"NodeName={hosts} NodeAddr=127.0.0.1 CPUs={CPUS} "
                         f"RealMemory={node_memory_mib} Gres=gpu:{gpu_type}:{gpus},{generic} "
                         f"Features={','.join(features)} State=UNKNOWN")
        partitions = [f"PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP"]
        partitions += [f"PartitionName={p} Nodes=ALL MaxTime=INFINITE State=UP"
                       for p in PARTITIONS]
        licenses = ",".join(f"{name}:{count}" for name, count in LICENSES.items())
        self.conf.write_text("\n".join([
            "ClusterName=cohort",
            "SlurmctldHost=localhost(127.0.0.1)",
            "SlurmctldPort=26817",
            # Far from Cohort's ids and from digits in file names, so ids can be told apart.
            "FirstJobId=700001",
            "SlurmdPort=26818",
            "SlurmUser=root",
            "AuthType=auth/munge",
            f"AuthInfo=socket={self.socket}",
            "CredType=cred/munge",
            f"StateSaveLocation={self.dir}/state",
            f"SlurmdSpoolDir={self.dir}/spool/%n",
            f"SlurmctldPidFile={self.dir}/run/slurmctld.pid",
            f"SlurmctldLogFile={self.dir}/log/slurmctld.log",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU_Memory",
            "SchedulerType=sched/backfill",
            "ProctrackType=proctrack/linuxproc",
            "MpiDefault=none",
            "MailProg=/bin/true",
            # Cohort refuses what cannot run in a partition, as EnforcePartLimits=ALL does.
            "EnforcePartLimits=ALL",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "GresTypes=gpu," + ",".join(sorted({n for g in GRES.values() for n in g})),
            f"Licenses={licenses}",
        ] + nodes + partitions) + "\n")
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))

    def start(self):
        key = self.dir / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        (self.dir / "munge").chmod(0o700)
        clean = ["env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin"]
        self.procs.append(subprocess.Popen(
            clean + ["munged", "--foreground", "--force", f"--key-file={key}",
                     f"--socket={self.socket}", f"--pid-file={self.dir}/munge/munged.pid",
                     f"--log-file={self.dir}/log/munged.log",
                     f"--seed-file={self.dir}/munge/seed"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        if not wait_for(self.socket.exists, 10):
            raise RuntimeError("munged did not start")
        self.procs.append(subprocess.Popen(
            clean + ["slurmctld", "-D", "-i", "-f", str(self.conf)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        if not wait_for(lambda: "UP" in run(["scontrol", "ping"], env=self.env).stdout, 30):
            raise RuntimeError("slurmctld did not start; see " + str(self.dir / "log"))

    def stop(self):
        for proc in reversed(self.procs):
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def submit(self, args, cwd):
        # Not held: a held job skips Slurm's checks of whether it could ever run. With no
        # slurmd, nothing starts.
        return run(["sbatch", "--parsable"] + args, env=self.env, cwd=cwd)

    def sinfo(self, args):
        return run(["sinfo"] + args, env=self.env)

    def scontrol(self, args):
        return run(["scontrol"] + args, env=self.env)

    def as_slurm(self, name, args):
        return subprocess.run([name] + args, env=self.env, capture_output=True, text=True,
                              timeout=30, stdin=subprocess.DEVNULL)

    def job(self, job_id):
        # A hetjob's leader id shows every component, one line each: keep the one asked for.
        shown = run(["scontrol", "show", "job", "-o", job_id], env=self.env).stdout
        for line in shown.splitlines():
            if line.startswith(f"JobId={job_id} "):
                return {key: value.strip()
                        for key, value in re.findall(r"(\S+?)=(.*?)(?= \S+?=|$)", line)}
        return {}


# --- how the two describe a job, reduced to comparable values ---------------------------

def minutes_of_slurm_time(text):
    if text in ("UNLIMITED", "Partition_Limit"):
        return None
    days = 0
    if "-" in text:
        day_text, text = text.split("-", 1)
        days = int(day_text)
    parts = [int(p) for p in text.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0)
    hours, minutes, seconds = parts
    return days * 1440 + hours * 60 + minutes + (1 if seconds else 0)


def het_components_of(id_set):
    """How many components a HetJobIdSet such as "7-9" names; 1 for a job of one."""
    first, _, last = id_set.partition("-")
    return int(last) - int(first) + 1 if last else 1


def mib_of_slurm_size(text):
    units = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}
    match = re.fullmatch(r"(\d+)([KMGT]?)", text)
    return int(int(match.group(1)) * units.get(match.group(2) or "M", 1)) if match else text


def number(value):
    return None if not value["set"] or value["infinite"] else value["number"]


def expand_hostlist(text):
    if text in ("", "(null)"):
        return []
    out = []
    for item in re.findall(r"[^,\[]+(?:\[[^\]]*\])?[^,]*", text):
        match = re.fullmatch(r"(.*?)\[(.*)\](.*)", item)
        if not match:
            out.append(item)
            continue
        for part in match.group(2).split(","):
            low, _, high = part.partition("-")
            for i in range(int(low), int(high or low) + 1):
                out.append(f"{match.group(1)}{i:0{len(low)}d}{match.group(3)}")
    return out


def licenses_of(text):
    if text in ("", "(null)"):
        return {}
    out = {}
    for item in text.split(","):
        name, _, count = item.partition(":")
        out[name] = out.get(name, 0) + int(count or 1)
    return out


def expand_output(pattern, job, default):
    path = pattern or default
    path = (path.replace("%j", "<id>").replace("%A", "<id>").replace("%x", job["name"])
            .replace("%u", job["user_name"]))
    return path if path.startswith("/") else job["current_working_directory"] + "/" + path


def slurm_view(fields, job_id):
    view = {
        "name": fields.get("JobName"),
        "partition": fields.get("Partition"),
        "time_limit_min": minutes_of_slurm_time(fields.get("TimeLimit", "")),
        "cpus_per_task": int(fields.get("CPUs/Task", "0")),
        "features": "" if fields.get("Features") == "(null)" else fields.get("Features"),
        "licenses": licenses_of(fields.get("Licenses", "(null)")),
        "tres_per_node": fields.get("TresPerNode", ""),
        "required_nodes": expand_hostlist(fields.get("ReqNodeList", "(null)")),
        "excluded_nodes": expand_hostlist(fields.get("ExcNodeList", "(null)")),
        "shared": fields.get("OverSubscribe"),
        "requeue": fields.get("Requeue") == "1",
        "work_dir": fields.get("WorkDir"),
        "stdout": fields.get("StdOut", "").replace(job_id, "<id>"),
        "stderr": fields.get("StdErr", "").replace(job_id, "<id>"),
        "comment": "" if fields.get("Comment", "(null)") == "(null)" else fields["Comment"],
        "mail_type": fields.get("MailType", "NONE"),
        "nodes_min": int(fields.get("NumNodes", "0").split("-")[0] or 0),
        "tasks": int(fields.get("NumTasks", "0") or 0),
        "account": None if fields.get("Account") == "(null)" else fields.get("Account"),
        "qos": None if fields.get("QOS") == "(null)" else fields.get("QOS"),
        "het_components": het_components_of(fields.get("HetJobIdSet", "")),
    }
    if "MinMemoryCPU" in fields:
        view["memory_per_cpu_mib"] = mib_of_slurm_size(fields["MinMemoryCPU"])
    else:
        view["memory_per_node_mib"] = mib_of_slurm_size(fields.get("MinMemoryNode", "0"))
    if fields.get("ArrayTaskId"):
        view["array"] = fields["ArrayTaskId"]
    if fields.get("MailUser") and fields.get("MailType", "NONE") != "NONE":
        view["mail_user"] = fields["MailUser"]
    return view


def cohort_view(job):
    mail = job.get("mail_type") or []
    view = {
        "name": job["name"],
        "partition": job["partition"],
        "time_limit_min": number(job["time_limit"]),
        "cpus_per_task": number(job["cpus_per_task"]),
        "features": job["features"],
        "licenses": licenses_of(job["licenses"]),
        "tres_per_node": job["tres_per_node"],
        "required_nodes": expand_hostlist(job["required_nodes"]),
        "excluded_nodes": expand_hostlist(job["excluded_nodes"]),
        "shared": job["shared"],
        "requeue": job["requeue"],
        "work_dir": job["current_working_directory"],
        "stdout": expand_output(job["standard_output"], job, "slurm-%j.out"),
        "stderr": expand_output(job["standard_error"] or job["standard_output"], job,
                                "slurm-%j.out"),
        "comment": job["comment"]["job"],
        "mail_type": ",".join(mail) if mail else "NONE",
        "nodes_min": number(job["node_count"]),
        "tasks": number(job["tasks"]) or 0,
        "account": job["account"],
        "qos": job["qos"],
        "het_components": het_components_of(job.get("het_job_id_set", "")),
    }
    if job["memory_per_cpu"]["set"]:
        view["memory_per_cpu_mib"] = number(job["memory_per_cpu"])
    else:
        view["memory_per_node_mib"] = number(job["memory_per_node"]) or 0
    if job.get("array_task_string"):
        maximum = number(job["array_max_tasks"])
        view["array"] = job["array_task_string"] + (f"%{maximum}" if maximum else "")
    if mail:
        view["mail_user"] = job["mail_user"]
    return view


# Fields Slurm derives that Cohort leaves to placement: compared only where the job asked.
def comparable(slurm, cohort):
    keys = set(slurm) | set(cohort)
    # Without accounting storage Slurm shows only what was asked; Cohort names its defaults.
    keys -= {key for key in ("account", "qos") if slurm.get(key) is None}
    if not cohort.get("nodes_min"):
        keys.discard("nodes_min")
    if not cohort.get("tasks"):
        keys.discard("tasks")
    if "array" in keys:  # Slurm names a pending array's files with %a unset
        keys -= {"stdout", "stderr"}
    return sorted(keys)


# --- the run ---------------------------------------------------------------------------

def cases():
    out = []
    for path in sorted(CORPUS.glob("*")):
        if path.name in ("SOURCES.md", "NOTES.md"):
            continue
        options, operands = CORPUS_ARGS.get(path.name, ([], []))
        out.append((f"corpus/{path.name}", options + [str(path)] + operands))
    for path in sorted(EXAMPLES.glob("*.sh")):
        out.append((f"examples/{path.name}", [str(path)]))
    for options in OWN_CASES:
        out.append(("own/" + " ".join(options), options + ["--wrap", "true"]))
    return out


def first_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def compare(name, args, slurm, cohort, work):
    s = slurm.submit(args, work)
    c = cohort.submit(args, work)
    s_ok, c_ok = s.returncode == 0, c.returncode == 0
    row = {"case": name, "slurm": "accepted" if s_ok else first_line(s.stderr),
           "cohort": "accepted" if c_ok else first_line(c.stderr), "differences": []}
    if s_ok != c_ok:
        row["differences"].append("decision")
    elif s_ok:
        s_id = int(s.stdout.strip().split(";")[0])
        c_id = int(c.stdout.strip())
        # A hetjob's components have consecutive ids on both: compare each.
        components = het_components_of(slurm.job(str(s_id)).get("HetJobIdSet", ""))
        for k in range(components):
            s_k, c_k = str(s_id + k), str(c_id + k)
            sv = slurm_view(slurm.job(s_k), s_k)
            cv = cohort_view(cohort.job(c_k))
            where = f"component {k} " if components > 1 else ""
            for key in comparable(sv, cv):
                if sv.get(key) != cv.get(key):
                    row["differences"].append(
                        f"{where}{key}: slurm {sv.get(key)!r} cohort {cv.get(key)!r}")
    if not c_ok and len(c.stderr.strip().splitlines()) != 1:
        row["differences"].append("cohort's refusal is not one line")
    return row


def compare_output(name, slurm, cohort):
    row = {"case": name, "slurm": first_line(slurm.stdout) or first_line(slurm.stderr),
           "cohort": first_line(cohort.stdout) or first_line(cohort.stderr),
           "differences": [], "output": True}
    if slurm.stdout != cohort.stdout or slurm.returncode != cohort.returncode:
        row["differences"].append(f"output: slurm {slurm.stdout!r} cohort {cohort.stdout!r}")
    return row


def compare_usage(name, slurm, cohort):
    """The same answer to -V/--version (success, one line) or to an unknown option (failure,
    one line on stderr naming it in getopt's words); the version text itself differs."""
    row = {"case": name, "slurm": first_line(slurm.stdout) or first_line(slurm.stderr),
           "cohort": first_line(cohort.stdout) or first_line(cohort.stderr),
           "differences": [], "usage": True}
    if (slurm.returncode == 0) != (cohort.returncode == 0):
        row["differences"].append(
            f"exit: slurm {slurm.returncode} cohort {cohort.returncode}")
    if cohort.returncode == 0 and len(cohort.stdout.splitlines()) != 1:
        row["differences"].append(f"cohort's version is not one line: {cohort.stdout!r}")
    if cohort.returncode != 0:
        if len(cohort.stderr.strip().splitlines()) != 1:
            row["differences"].append("cohort's refusal is not one line")
        unknown = name.split()[-1]
        for side, proc in (("slurm", slurm), ("cohort", cohort)):
            if f"unrecognized option '{unknown}'" not in proc.stderr:
                row["differences"].append(f"{side} does not name {unknown}: {proc.stderr!r}")
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bin_dir")
    parser.add_argument("--report")
    options = parser.parse_args()
    if os.geteuid() != 0:
        print("SKIP: slurmctld and munged are started as root here; run as root")
        return SKIP
    missing = [b for b in ("slurmctld", "sbatch", "scontrol", "munged") if not shutil.which(b)]
    if missing:
        print("SKIP: missing " + ", ".join(missing) + " (scripts/setup.sh installs them)")
        return SKIP
    if not CORPUS.is_dir() or not EXAMPLES.is_dir():
        print(f"SKIP: {CORPUS} or {EXAMPLES} is absent")
        return SKIP
    work = Path(tempfile.mkdtemp(prefix="cohort-differential-"))
    (work / "log").mkdir()
    (work / "bam").mkdir()
    cohort = Cohort(options.bin_dir, work)
    slurm = None
    rows = []
    try:
        cohort.start()
        node = cohort.nodes()[0]
        _, gpu_type, gpus = node["gres"].split(",")[0].split(":")
        slurm = Slurm(work, node["real_memory"], gpus, gpu_type)
        slurm.start()
        for name, args in cases():
            rows.append(compare(name, args, slurm, cohort, str(work)))
        for args in SINFO_CASES:
            rows.append(compare_output("sinfo " + " ".join(args), slurm.sinfo(args),
                                       cohort.sinfo(args)))
        for args in SCONTROL_CASES:
            rows.append(compare_output("scontrol " + " ".join(args), slurm.scontrol(args),
                                       cohort.scontrol(args)))
        for command in USAGE_COMMANDS:
            for args in USAGE_CASES:
                rows.append(compare_usage(" ".join([command] + args),
                                          slurm.as_slurm(command, args),
                                          cohort.as_slurm(command, args)))
    finally:
        if slurm:
            slurm.stop()
        cohort.stop()
        shutil.rmtree(work, ignore_errors=True)
    return report(rows, options.report)


def report(rows, path):
    outputs = [r for r in rows if r.get("output")]
    usage = [r for r in rows if r.get("usage")]
    rows_submitted = [r for r in rows if not r.get("output") and not r.get("usage")]
    same_decision = sum(1 for r in rows_submitted if "decision" not in r["differences"])
    accepted = [r for r in rows_submitted
                if r["slurm"] == "accepted" and r["cohort"] == "accepted"]
    same_fields = sum(1 for r in accepted if not r["differences"])
    same_output = sum(1 for r in outputs if not r["differences"])
    same_usage = sum(1 for r in usage if not r["differences"])
    unexplained = [r for r in rows if r["differences"] and r["case"] not in DELIBERATE]
    stale = [name for name in DELIBERATE
             if not any(r["case"] == name and r["differences"] for r in rows)]
    lines = [f"{len(rows_submitted)} submissions; decisions equal: {same_decision}/"
             f"{len(rows_submitted)}; accepted by both: {len(accepted)}, fields equal: "
             f"{same_fields}/{len(accepted)}; sinfo and scontrol outputs equal: "
             f"{same_output}/{len(outputs)}; "
             f"version and unknown-option answers equal: {same_usage}/{len(usage)}"]
    for r in rows:
        mark = "ok " if not r["differences"] else ("DEL" if r["case"] in DELIBERATE else "BAD")
        lines.append(f"{mark} {r['case']}: slurm: {r['slurm']} | cohort: {r['cohort']}")
        for difference in r["differences"]:
            lines.append(f"      {difference}")
        if r["differences"] and r["case"] in DELIBERATE:
            lines.append(f"      deliberate: {DELIBERATE[r['case']]}")
    for name in stale:
        lines.append(f"STALE {name}: listed as deliberate but no longer differs")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if path:
        Path(path).write_text(text)
    return 1 if unexplained or stale else 0


if __name__ == "__main__":
    sys.exit(main())
