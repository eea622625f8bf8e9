"""One host's half of a mesh: the agent that owns the lives of the ranks placed on its host.

    plan = HostPlan(index=0, argv=["train.py"], cwd="/job", ranks=(RankPlan(0, "r0 procs=0", env), ...))
    agent = HostAgent(plan, events)     # events: spawned(rank, pid), exited(rank, code)
    await agent.start()                 # the fork server forks every rank of the plan
    await agent.stop()                  # SIGTERM, then SIGKILL after a grace period
    await agent.close()

The plan (which ranks, their environment, the script: torch elastic's WorkerSpec) is made by
the central `run` and kept apart from the agent that carries it out (torch elastic's agent).
A single-host `meshdbg run` runs one agent in its own process; `meshdbg host --join URL` runs
one on each node and relays its events over gRPC. This package imports the wire and the
worker side, never the central side (meshdbg.debugger): a node needs no console.
"""
