"""Paper 000's pipeline as one resumable driver: routes -> (baselines) -> RRE experts -> MOPD -> report.

Phases (each an atomic run directory under ``DIR``, see :mod:`swetrain.experts.phases`)::

    label                         routes.json: the pool's and evaluation sets' instances per route
    baselines/pooled, /balanced   joint RL over the pool (natural mix / route-balanced), same budget
    experts/C/base-mastery        base pass rates on route C's pool (M rollouts each)
    experts/C/r0-rl               initial Agentic-miniRL on the frontier; best checkpoint by C-score
    experts/C/rK-refresh-rl       post-RL mastery on the RL set (+ RL history as success evidence)
    experts/C/rK-sft              Repair SFT: verified successes by mastery quota, cycled to budget
    experts/C/rK-refresh-sft      post-SFT mastery on the same set; paired before/after counts
    experts/C/rK-expand           refresh pool U (RL set + base 0/1 instances) -> next RL set
    experts/C/rK-rl               Agentic-miniRL from the SFT model; best checkpoint by C-score
    (experts.final_repair: one more refresh -> Repair SFT -> refresh after the last RL; the expert is
    then that SFT model, as in the paper's initial RL, SFT 1, expanded RL, SFT 2)
    mopd                          student from the base; routed frozen teachers + frozen reference
    eval/NAME                     every model on every route's evaluation set, same tasks and seeds
    report                        report.json, report.md, PNG plots (also copied to DIR/)
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, TYPE_CHECKING

from swetrain.experts.config import ExpertsConfig
from swetrain.experts.phases import PhaseStore

if TYPE_CHECKING:
    from swetrain.agent.loop import PatchVerifier


class ExpertsError(ValueError):
    """Bad input to the pipeline (no tasks for a route, a labels file that does not match the pool,
    a missing expert checkpoint, ...). The message names the problem; nothing is half-written."""


# ------------------------------------------------------------------------------------ tasks
def load_split(source: str, split: str) -> list[Any]:
    if source == "builtin":
        from swetrain.tasks.builtin import load_builtin

        return list(load_builtin(split=split))
    from swetrain.tasks import load_tasks

    return [t for t in load_tasks(source) if (t.split or split) == split]


def _read_labels_file(path: str) -> dict[str, Any]:
    p = Path(path)
    if not p.is_file():
        raise ExpertsError(f"label.file: {p} does not exist")
    from swetrain.label.io import jsonl_objects

    out: dict[str, Any] = {}
    for n, row, _ in jsonl_objects(p):
        if row is None or "instance_id" not in row:
            raise ExpertsError(f"label.file: {p}:{n}: not a JSON object with instance_id and route")
        out[str(row["instance_id"])] = row.get("route")
    return out


def assign_routes(cfg: ExpertsConfig, tasks: list[Any]) -> dict[str, Any]:
    """instance_id -> route (or None) by ``cfg.label.source``."""
    src = cfg.label.source
    if src == "tasks":
        return {t.instance_id: t.route for t in tasks}
    if src == "file":
        labels = _read_labels_file(str(cfg.label.file))
        missing = sorted(t.instance_id for t in tasks if t.instance_id not in labels)
        if missing:
            raise ExpertsError(
                f"label.file: {cfg.label.file} does not match the pool: {len(missing)} of {len(tasks)} "
                f"pool/evaluation instances have no row (e.g. {', '.join(missing[:3])})"
            )
        return {t.instance_id: labels[t.instance_id] for t in tasks}
    from swetrain.label.labeler import Labeler

    labeler = Labeler(backend="offline", use_embeddings=cfg.label.embed)
    rows = [
        {"instance_id": t.instance_id, "repo": t.repo, "problem_statement": t.problem_statement,
         "patch": t.patch, "test_patch": t.test_patch}
        for t in tasks
    ]
    return {r["instance_id"]: r.get("route") for r in labeler.label_rows(rows)}


def _seeded_take(ids: list[str], n: int | None, seed: int) -> list[str]:
    ids = sorted(ids)
    random.Random(seed).shuffle(ids)
    return ids if n is None else ids[:n]


# ------------------------------------------------------------------------------------ driver
class ExpertsPipeline:
    def __init__(self, cfg: ExpertsConfig, out: str | os.PathLike, *, log: Callable[[str], None] = print,
                 verifier: PatchVerifier | None = None) -> None:
        self.cfg = cfg
        self.out = Path(out)
        self.log = log
        self.verifier = verifier
        self.phases = PhaseStore(self.out, log=log)
        self._tasks: dict[str, Any] | None = None

    # -------------------------------------------------------------- helpers
    def rel(self, path: Path) -> str:
        return str(Path(path).relative_to(self.out))

    def model_dir(self, ref: str) -> Path:
        """A model reference of a phase.json: ``base`` or a path relative to ``DIR``."""
        if ref == "base":
            return self.base_path
        return self.out / ref

    @property
    def base_path(self) -> Path:
        from swetrain.policy.spec import parse_policy_spec

        return parse_policy_spec(self.cfg.policy).model_path()

    def _policy(self, model: Path) -> Any:
        from swetrain.policy.hf import HFPolicy

        return HFPolicy(model)  # cuda when available, else cpu

    def tasks(self) -> dict[str, Any]:
        """instance_id -> Task (with the route of ``label/routes.json``)."""
        if self._tasks is None:
            routes = self.routes()
            assigned = {**routes["assignment"]}
            out = {}
            for split in (self.cfg.pool.train_split, self.cfg.pool.eval_split):
                for t in load_split(self.cfg.pool.tasks, split):
                    if t.instance_id in assigned:
                        out[t.instance_id] = t.model_copy(update={"route": assigned[t.instance_id]})
            self._tasks = out
        return self._tasks

    def routes(self) -> dict[str, Any]:
        return json.loads((self.out / "label" / "routes.json").read_text())

    def pool(self, route: str) -> list[Any]:
        t = self.tasks()
        return [t[i] for i in self.routes()["train"][route]]

    def eval_tasks(self) -> list[Any]:
        r = self.routes()
        t = self.tasks()
        ids = [i for route in self.cfg.pool.routes for i in r["eval"][route]] + r["unassigned_eval"]
        return [t[i] for i in ids]

    def eval_protocol(self) -> Any:
        """The pipeline's evaluation: ``eval.samples`` independent first attempts per task (chains
        of seed ``eval.seed``, the same for every model) with the pipeline's sampling."""
        from swetrain.eval.protocol import EvalProtocol

        s = self.cfg.sampling
        return EvalProtocol(**s.sampling().model_dump(), attempts=1, mode="resample", context="none",
                            seeds=[self.cfg.eval.seed], chains=self.cfg.eval.samples, workers=s.workers)

    def evaluate(self, model: Path, tasks: list[Any], out_dir: Path) -> dict[str, float]:
        """Resolved fraction per task of :meth:`eval_protocol`, run by :func:`swetrain.eval.protocol.run_eval`
        (``out_dir/eval.json``, the schema of ``swetrain eval``). Infrastructure failures are not
        scored; a task with none scored counts 0."""
        from swetrain.eval.protocol import run_eval, task_success

        name = self.rel(model) if Path(model).is_relative_to(self.out) else str(model)
        record = run_eval(self._policy(model), tasks, out_dir, self.eval_protocol(), policy_name=name,
                          verifier=self.verifier)
        return task_success(record)

    def estimate(self, model: Path, tasks: list[Any], mastery: Any, phase: str, out_dir: Path) -> dict[str, Any]:
        from swetrain.curriculum.mastery import estimate_mastery

        s = self.cfg.sampling
        return estimate_mastery(
            self._policy(model), tasks, out_dir, mastery, phase=phase, rollouts=self.cfg.mastery.rollouts,
            seed=self.cfg.seed, workers=s.workers, sampling=s.sampling(), verifier=self.verifier,
        )

    def train_config(self, recipe: str, steps: int, tasks_per_step: int, group: int, lr: float,
                     extra: list[str], user: list[str], save_every: int) -> Any:
        from swetrain.train.config import load_config, validate_config

        s = self.cfg.sampling
        base = [
            f"train.steps={steps}", f"train.save_every={save_every}", f"train.keep_checkpoints={steps}",
            f"rollout.tasks_per_step={tasks_per_step}", f"rollout.group={group}", "rollout.attempts=1",
            "rollout.context_variant=none", *(f"rollout.{k}={v}" for k, v in s.sampling().model_dump().items()),
            f"rollout.workers={s.workers}", f"optim.lr={lr}", f"seed={self.cfg.seed}",
            "logging.tensorboard=false", "logging.progress=false",
        ]
        cfg = load_config(recipe, overrides=[*base, *extra, *user])
        return validate_config(cfg.model_dump(mode="json"))

    def rl_phase(self, tmp: Path, name: str, model: Path, tasks: list[Any], select_on: list[Any] | None,
                 rl: Any, extra: list[str] | None = None, teachers: dict[str, str] | None = None) -> dict[str, Any]:
        """One RL phase in ``tmp/run``; the phase's model is its best checkpoint on ``select_on``
        (the target route's evaluation set; ``None``: the last checkpoint)."""
        from swetrain.train.metrics import read_metrics
        from swetrain.train.rl import RLTrainer

        extra = list(extra or [])
        if teachers is not None:  # JSON is YAML: paths survive the key=value override parser
            extra.append("algo.mopd.teachers=" + json.dumps(teachers))
        tc = self.train_config(rl.recipe, rl.steps, rl.tasks_per_step, rl.group, rl.lr, extra,
                               list(rl.overrides), rl.save_every)
        run = tmp / "run"
        trainer = RLTrainer(tc, run, tasks=tasks, policy_path=model, verifier=self.verifier)
        trainer.train()
        del trainer
        ckpts = sorted((run / "checkpoints").glob("step-*"))
        candidates: dict[int, float] = {}
        if select_on is not None and len(ckpts) > 1:
            for c in ckpts:
                step = int(c.name.split("-")[1])
                scores = self.evaluate(c / "model", select_on, tmp / "select" / c.name)
                candidates[step] = sum(scores.values()) / max(len(scores), 1)
            best_step = max(candidates, key=lambda k: (candidates[k], k))
        else:
            best_step = int(ckpts[-1].name.split("-")[1])
        best = next(c for c in ckpts if int(c.name.split("-")[1]) == best_step)
        os.replace(best / "model", tmp / "model")
        shutil.rmtree(run / "checkpoints", ignore_errors=True)  # optimizer states: not needed after the phase
        score = None
        if select_on is not None:
            score = candidates.get(best_step)
            if score is None:
                scores = self.evaluate(tmp / "model", select_on, tmp / "select" / "final")
                score = sum(scores.values()) / max(len(scores), 1)
        metrics = read_metrics(run)
        return {"model": f"{name}/model", "best_step": best_step, "candidates": candidates, "score": score,
                "tasks": [t.instance_id for t in tasks], "steps": len(metrics),
                "rollout_budget": rl.steps * rl.tasks_per_step * rl.group}

    @staticmethod
    def epoch_saver(trainer: Any, out: Path, epochs: int) -> Callable[[int, int, dict[str, float]], None]:
        """An ``SFTTrainer.train`` step callback that saves the model after each epoch into
        ``out/epoch-K`` (every epoch has the same number of optimizer steps)."""

        def on_step(step: int, total: int, metrics: dict[str, float]) -> None:
            per_epoch = max(1, total // epochs)
            if step % per_epoch == 0 or step == total:
                trainer.save(out / f"epoch-{min(epochs, -(-step // per_epoch))}")

        return on_step

    def best_epoch(self, epochs_dir: Path, evals: list[Any], tmp: Path) -> tuple[int, dict[int, float]]:
        """Score every saved epoch on the target route's evaluation set and move the best (ties: the
        later epoch) to ``tmp/model``; the other snapshots are deleted. Returns (best epoch, scores)."""
        candidates: dict[int, float] = {}
        for d in sorted(epochs_dir.glob("epoch-*"), key=lambda d: int(d.name.split("-")[1])):
            scores = self.evaluate(d, evals, tmp / "select" / d.name)
            candidates[int(d.name.split("-")[1])] = sum(scores.values()) / max(len(scores), 1)
        if not candidates:
            raise RuntimeError(f"repair SFT saved no epoch under {epochs_dir}")
        best = max(candidates, key=lambda k: (candidates[k], k))
        os.replace(epochs_dir / f"epoch-{best}", tmp / "model")
        shutil.rmtree(epochs_dir, ignore_errors=True)
        return best, candidates

    # -------------------------------------------------------------- phases
    def run(self) -> dict[str, Any]:
        self.out.mkdir(parents=True, exist_ok=True)
        cfg_file = self.out / "config.yaml"
        dumped = self.cfg.to_yaml()
        if cfg_file.is_file() and cfg_file.read_text() != dumped:
            raise ExpertsError(f"{self.out} holds a pipeline run with another config ({cfg_file}); use a new --out")
        if not cfg_file.is_file():
            cfg_file.write_text(dumped)
        self.phases.run("label", self.phase_label)
        models: dict[str, str] = {"base": "base"}
        if self.cfg.baselines.enabled:
            for kind in ("pooled", "balanced"):
                info = self.phases.run(f"baselines/{kind}", lambda tmp, k=kind: self.phase_baseline(tmp, k))
                models[kind] = info["model"]
        for route in self.cfg.pool.routes:
            models[f"expert_{route}"] = self.expert(route)
        info = self.phases.run("mopd", lambda tmp: self.phase_mopd(tmp, {r: models[f"expert_{r}"] for r in self.cfg.pool.routes}))
        models["mopd"] = info["model"]
        for name, ref in models.items():
            self.phases.run(f"eval/{name}", lambda tmp, r=ref: self.phase_eval(tmp, r))
        info = self.phases.run("report", lambda tmp: self.phase_report(tmp, list(models)))
        for f in (self.out / "report").iterdir():
            if f.suffix in (".json", ".md", ".png") and f.name != "phase.json":
                shutil.copyfile(f, self.out / f".{f.name}.tmp")
                os.replace(self.out / f".{f.name}.tmp", self.out / f.name)
        return info

    def phase_label(self, tmp: Path) -> dict[str, Any]:
        cfg = self.cfg
        train = load_split(cfg.pool.tasks, cfg.pool.train_split)
        evals = load_split(cfg.pool.tasks, cfg.pool.eval_split)
        if not train:
            raise ExpertsError(f"pool: no tasks in {cfg.pool.tasks!r} split {cfg.pool.train_split!r}")
        assignment = assign_routes(cfg, train + evals)
        out: dict[str, Any] = {"source": cfg.label.source, "train": {}, "eval": {}, "assignment": {}}
        for r in cfg.pool.routes:
            tr = [t.instance_id for t in train if assignment.get(t.instance_id) == r]
            ev = [t.instance_id for t in evals if assignment.get(t.instance_id) == r]
            if not tr:
                raise ExpertsError(f"route {r}: no training tasks in the pool ({cfg.pool.tasks}, split {cfg.pool.train_split})")
            if not ev:
                raise ExpertsError(f"route {r}: no evaluation tasks ({cfg.pool.tasks}, split {cfg.pool.eval_split})")
            out["train"][r] = _seeded_take(tr, cfg.pool.train_per_route, cfg.seed)
            out["eval"][r] = _seeded_take(ev, cfg.pool.eval_per_route, cfg.seed)
        routes = set(cfg.pool.routes)
        out["unassigned_train"] = sorted(t.instance_id for t in train if assignment.get(t.instance_id) not in routes)
        out["unassigned_eval"] = _seeded_take(
            [t.instance_id for t in evals if assignment.get(t.instance_id) not in routes], cfg.pool.eval_per_route, cfg.seed)
        for key in ("train", "eval"):
            for r, ids in out[key].items():
                for i in ids:
                    out["assignment"][i] = r
        for i in out["unassigned_eval"]:
            out["assignment"][i] = None
        (tmp / "routes.json").write_text(json.dumps(out, indent=1))
        counts = {r: {"train": len(out["train"][r]), "eval": len(out["eval"][r])} for r in cfg.pool.routes}
        return {"counts": counts, "unassigned": {"train": len(out["unassigned_train"]), "eval": len(out["unassigned_eval"])}}

    def phase_baseline(self, tmp: Path, kind: str) -> dict[str, Any]:
        """Joint RL from the base at the baselines' budget: ``pooled`` draws from the union of the
        routes' pools in its natural mix; ``balanced`` interleaves the routes (stratified)."""
        b = self.cfg.baselines
        pools = {r: self.pool(r) for r in self.cfg.pool.routes}
        if kind == "pooled":
            tasks = [t for r in self.cfg.pool.routes for t in pools[r]]
            random.Random(self.cfg.seed).shuffle(tasks)
        else:
            tasks = _balanced(pools, None, self.cfg.seed)
        rl = _Phase("minirl", b.steps, b.tasks_per_step, b.group, b.lr, [], b.steps)
        info = self.rl_phase(tmp, f"baselines/{kind}", self.base_path, tasks, None, rl,
                             extra=["tasks.shuffle=false"] if kind == "balanced" else [])
        return info

    # -------------------------------------------------------------- experts
    def expert(self, route: str) -> str:
        """Run (or skip) route ``route``'s RRE phases; return the expert's model reference."""
        from swetrain.curriculum.mastery import MasteryMap, regressions, solved_instances
        from swetrain.curriculum.replay import plan_replay
        from swetrain.curriculum.select import FrontierConfig, refresh_pool, select_frontier
        from swetrain.rollout.store import TrajectoryStore

        cfg = self.cfg
        ex = cfg.experts
        pool = self.pool(route)
        by_id = {t.instance_id: t for t in pool}
        evals = [self.tasks()[i] for i in self.routes()["eval"][route]]
        root = f"experts/{route}"

        def mastery_of(phase: str) -> Any:
            return MasteryMap.load(self.out / root / phase / "mastery.json")

        def select(mastery: Any, candidates: list[str], seed: int) -> tuple[list[str], dict[str, Any]]:
            sel = select_frontier(mastery, candidates, FrontierConfig(ex.max_rl_tasks, ex.evidence_share, seed))
            info: dict[str, Any] = {"selection": sel.counts(), "fallback": False}
            ids = sel.selected
            if not ids:
                if ex.empty_frontier == "error":
                    raise ExpertsError(f"route {route}: the selector found no informative instance (all hard zeros or saturated)")
                ids = sorted(candidates)[: ex.max_rl_tasks or len(candidates)]
                info["fallback"] = True
            return ids, info

        def base_mastery(tmp: Path) -> dict[str, Any]:
            m = MasteryMap(policy=cfg.policy)
            res = self.estimate(self.base_path, pool, m, "base", tmp / "rollouts")
            m.save(tmp / "mastery.json")
            return {"summary": m.summary(), "skipped": res["skipped"]}

        self.phases.run(f"{root}/base-mastery", base_mastery)

        def rl0(tmp: Path) -> dict[str, Any]:
            m = mastery_of("base-mastery")
            ids, sel = select(m, list(by_id), cfg.seed)
            info = self.rl_phase(tmp, f"{root}/r0-rl", self.base_path, [by_id[i] for i in ids], evals, ex.rl)
            return {**info, **sel, "stage": "initial RL"}

        last = self.phases.run(f"{root}/r0-rl", rl0)
        last_mastery = "base-mastery"
        for r in range(1, ex.rounds + 1 + int(ex.final_repair)):
            prev_rl = f"r{r - 1}-rl"
            model = self.model_dir(last["model"])
            rl_set = list(last["tasks"])
            rl_phase_name = f"rl-{r - 1}"

            def refresh_rl(tmp: Path, prev=prev_rl, model=model, rl_set=rl_set, lm=last_mastery, ph=rl_phase_name) -> dict[str, Any]:
                m = mastery_of(lm)
                res = self.estimate(model, [by_id[i] for i in sorted(set(rl_set))], m, ph, tmp / "rollouts")
                history = TrajectoryStore(self.out / root / prev / "run").read_all()
                added = m.add_success_evidence(solved_instances(history))
                m.save(tmp / "mastery.json")
                paired = {k: len(v) for k, v in regressions(m, "base", ph).items()}
                return {"summary": m.summary(), "evidence_added": added, "paired_vs_base": paired,
                        "skipped": res["skipped"]}

            self.phases.run(f"{root}/r{r}-refresh-rl", refresh_rl)

            def sft(tmp: Path, prev=prev_rl, model=model, last=last, r=r) -> dict[str, Any]:
                from swetrain.train.sft import SFTConfig, SFTTrainer, sample_for_sft

                m = mastery_of(f"r{r}-refresh-rl")
                trajs = TrajectoryStore(self.out / root / prev / "run").read_all()
                plan = plan_replay(trajs, m, ex.sft.budget, max_quota=ex.sft.max_quota, min_quota=ex.sft.min_quota)
                if not plan:
                    return {"model": last["model"], "samples": 0, "score": last.get("score"), "stage": f"repair SFT {r}",
                            "skipped": "no verified success in the RL phase: nothing to replay (model unchanged)"}
                trainer = SFTTrainer.from_pretrained(model, SFTConfig(epochs=ex.sft.epochs, lr=ex.sft.lr, seed=cfg.seed))
                metrics = trainer.train([sample_for_sft(t) for t in plan],
                                        self.epoch_saver(trainer, tmp / "epochs", ex.sft.epochs))
                best_epoch, candidates = self.best_epoch(tmp / "epochs", evals, tmp)
                return {"model": f"{root}/r{r}-sft/model", "samples": len(plan),
                        "distinct": len({(t.instance_id, t.chain, t.attempt) for t in plan}),
                        "instances": len({t.instance_id for t in plan}), "loss": metrics.get("loss"),
                        "best_epoch": best_epoch, "candidates": candidates,
                        "score": candidates[best_epoch], "stage": f"repair SFT {r}"}

            sft_info = self.phases.run(f"{root}/r{r}-sft", sft)
            sft_model = self.model_dir(sft_info["model"])
            sft_phase = f"sft-{r}"

            def refresh_sft(tmp: Path, model=sft_model, rl_set=rl_set, r=r, ph=rl_phase_name, sp=sft_phase) -> dict[str, Any]:
                m = mastery_of(f"r{r}-refresh-rl")
                res = self.estimate(model, [by_id[i] for i in sorted(set(rl_set))], m, sp, tmp / "rollouts")
                m.save(tmp / "mastery.json")
                return {"summary": m.summary(), "skipped": res["skipped"],
                        "paired_rl_to_sft": {k: len(v) for k, v in regressions(m, ph, sp).items()},
                        "paired_base_to_sft": {k: len(v) for k, v in regressions(m, "base", sp).items()}}

            self.phases.run(f"{root}/r{r}-refresh-sft", refresh_sft)
            if r > ex.rounds:  # the final repair (paper: T_c = π_SFT^(R)): no expand, no further RL
                return sft_info["model"]

            def expand(tmp: Path, model=sft_model, rl_set=rl_set, r=r, sp=sft_phase) -> dict[str, Any]:
                m = mastery_of(f"r{r}-refresh-sft")
                u = refresh_pool(m, rl_set, list(by_id), ex.expand_extra, base_phase="base", seed=cfg.seed + r)
                new = [i for i in u if i not in set(rl_set)]
                res = self.estimate(model, [by_id[i] for i in new], m, sp, tmp / "rollouts") if new else {"skipped": {}}
                m.save(tmp / "mastery.json")
                ids, sel = select(m, u, cfg.seed + r)
                return {"refresh_pool": u, "probed": new, "next_rl_set": ids, **sel, "summary": m.summary(),
                        "skipped": res["skipped"]}

            exp = self.phases.run(f"{root}/r{r}-expand", expand)

            def rl(tmp: Path, model=sft_model, exp=exp, r=r) -> dict[str, Any]:
                info = self.rl_phase(tmp, f"{root}/r{r}-rl", model, [by_id[i] for i in exp["next_rl_set"]], evals, ex.rl)
                return {**info, "stage": f"expanded RL {r}"}

            last = self.phases.run(f"{root}/r{r}-rl", rl)
            last_mastery = f"r{r}-expand"
        return last["model"]

    # -------------------------------------------------------------- MOPD
    def phase_mopd(self, tmp: Path, experts: dict[str, str]) -> dict[str, Any]:
        m = self.cfg.mopd
        teachers = {}
        for route, ref in experts.items():
            path = self.model_dir(ref)
            if not (path / "config.json").is_file():
                raise ExpertsError(f"mopd: expert checkpoint of route {route} is missing: {path}")
            teachers[route] = str(path.resolve())
        pools = {r: self.pool(r) for r in self.cfg.pool.routes}
        tasks = _balanced(pools, m.mix, self.cfg.seed)
        extra = ["algo.policy_loss=mopd", "algo.loss_agg=seq-mean-segment-sum", "algo.kl_beta=0",
                 "algo.use_return_to_go=false", "algo.runtime_penalty=false", f"algo.mopd.lam={m.lam}",
                 f"algo.mopd.gate={str(m.gate).lower()}", f"algo.mopd.clip={m.clip}",
                 f"optim.weight_decay={m.weight_decay}", "tasks.shuffle=false"]
        rl = _Phase("minirl", m.steps, m.tasks_per_step, m.group, m.lr, list(m.overrides), m.steps)
        info = self.rl_phase(tmp, "mopd", self.base_path, tasks, None, rl, extra=extra, teachers=teachers)
        return {**info, "teachers": experts, "mix": {r: sum(1 for t in tasks if t.route == r) for r in pools}}

    # -------------------------------------------------------------- evaluation + report
    def phase_eval(self, tmp: Path, ref: str) -> dict[str, Any]:
        model = self.model_dir(ref)
        if not (model / "config.json").is_file():
            raise ExpertsError(f"eval: model {ref} is missing ({model})")
        per_task = self.evaluate(model, self.eval_tasks(), tmp)  # tmp/eval.json: the record of swetrain eval
        return {"model": ref, "tasks": len(per_task), "mean": sum(per_task.values()) / max(len(per_task), 1)}

    def phase_report(self, tmp: Path, names: list[str]) -> dict[str, Any]:
        from swetrain.experts.report import build_report, write_markdown, write_plots

        from swetrain.eval.protocol import load_eval, task_success

        evals = {n: task_success(load_eval(self.out / "eval" / n)) for n in names}
        routes = self.routes()
        stages = {r: self.stage_scores(r) for r in self.cfg.pool.routes}
        mopd_metrics = [json.loads(x) for x in (self.out / "mopd" / "run" / "metrics.jsonl").read_text().splitlines() if x.strip()]
        report = build_report(self.cfg.pool.routes, routes["eval"], routes["unassigned_eval"], evals,
                              n_boot=self.cfg.eval.bootstrap, seed=self.cfg.eval.seed)
        report["stages"] = stages
        report["mopd_curve"] = [{"step": m.get("step"), "kl": m.get("mopd/student_teacher_k1"),
                                 "score": m.get("reward/mean")} for m in mopd_metrics]
        report["paired_mastery"] = {r: self.paired(r) for r in self.cfg.pool.routes}
        report["phase_seconds"] = self.phase_seconds()
        (tmp / "report.json").write_text(json.dumps(report, indent=1, default=_nan_none))
        plots = write_plots(report, tmp)
        write_markdown(report, tmp / "report.md", plots, self.cfg)
        return {"models": names, "plots": [p.name for p in plots]}

    def stage_scores(self, route: str) -> list[dict[str, Any]]:
        out = []
        root = self.out / "experts" / route
        for d in sorted(root.iterdir(), key=_phase_order):
            info = json.loads((d / "phase.json").read_text()) if (d / "phase.json").is_file() else {}
            if info.get("score") is not None:
                out.append({"phase": d.name, "stage": info.get("stage", d.name), "score": info["score"],
                            "skipped": bool(info.get("skipped"))})
        return out

    def paired(self, route: str) -> dict[str, Any]:
        out = {}
        root = self.out / "experts" / route
        for d in sorted(root.iterdir(), key=_phase_order):
            info = json.loads((d / "phase.json").read_text()) if (d / "phase.json").is_file() else {}
            for key in ("paired_vs_base", "paired_rl_to_sft", "paired_base_to_sft"):
                if key in info:
                    out[f"{d.name}:{key}"] = info[key]
        return out

    def phase_seconds(self) -> dict[str, float]:
        out = {}
        for marker in sorted(self.out.rglob("phase.json")):
            if ".tmp" in marker.parts:
                continue
            info = json.loads(marker.read_text())
            out[info.get("phase", str(marker.parent))] = info.get("seconds")
        return out


class _Phase:
    """The knobs :meth:`ExpertsPipeline.rl_phase` reads, for baselines and MOPD."""

    def __init__(self, recipe: str, steps: int, tasks_per_step: int, group: int, lr: float, overrides: list[str],
                 save_every: int) -> None:
        self.recipe, self.steps, self.tasks_per_step, self.group, self.lr = recipe, steps, tasks_per_step, group, lr
        self.overrides, self.save_every = overrides, save_every


def _balanced(pools: dict[str, list[Any]], mix: dict[str, float] | None, seed: int) -> list[Any]:
    """A task stream that interleaves the routes by ``mix`` (equal shares by default), each
    route's tasks upsampled (cycled, shuffled per cycle) to its share."""
    routes = sorted(pools)
    shares = {r: (mix or {}).get(r, 1.0 if mix is None else 0.0) for r in routes}
    total = sum(shares.values())
    n = max(len(p) for p in pools.values()) * len(routes)
    counts = {r: round(n * shares[r] / total) for r in routes}
    rng = random.Random(seed)
    streams: dict[str, list[Any]] = {}
    for r in routes:
        out: list[Any] = []
        while len(out) < counts[r] and pools[r]:
            cyc = list(pools[r])
            rng.shuffle(cyc)
            out.extend(cyc)
        streams[r] = out[: counts[r]]
    # interleave in proportion: pick the route furthest behind its share
    result: list[Any] = []
    taken = {r: 0 for r in routes}
    while len(result) < sum(counts.values()):
        r = min((r for r in routes if taken[r] < counts[r]), key=lambda r: (taken[r] / max(counts[r], 1), r))
        result.append(streams[r][taken[r]])
        taken[r] += 1
    return result


def _phase_order(d: Path) -> tuple[int, int, str]:
    name = d.name
    if name == "base-mastery":
        return (-1, 0, name)
    head, _, tail = name.partition("-")
    try:
        r = int(head[1:])
    except ValueError:
        return (99, 0, name)
    idx = {"rl": 5 if r > 0 else 0, "refresh-rl": 1, "sft": 2, "refresh-sft": 3, "expand": 4}.get(tail, 9)
    return (r, idx, name)


def _nan_none(x: Any) -> Any:
    if isinstance(x, float) and math.isnan(x):
        return None
    return str(x)
