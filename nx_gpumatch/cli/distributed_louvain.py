"""``mpiexec -n P nx-gpumatch distributed louvain|leiden ...``: communities of a
graph spread over the ranks (the options are parsed and checked by
:mod:`nx_gpumatch.cli.distributed`). Rank 0 prints the objective, the number of
communities, the levels, the time per phase and the messages."""

from nx_gpumatch.cli.distributed import _fail, load_timed


def run_communities(args):
    from nx_gpumatch import distributed as D
    from nx_gpumatch.distributed._comm import gather

    comm = D._comm.get_comm()
    leiden = args.problem == "leiden"
    cpm = leiden and args.metric == "cpm"
    try:
        part, what, t_load, owner = load_timed(args, comm)
        kw = {"resolution": args.resolution, "max_level": args.max_level, "seed": args.seed}
        if leiden:
            kw.update(metric=args.metric, theta=args.theta, passes=args.passes)
            res = D.leiden_communities(part, owner=owner, **kw)
        else:
            res = D.louvain_communities(part, owner=owner, threshold=args.threshold, **kw)
        q = res.cpm() if cpm else res.modularity()
        k = res.num_communities()
        connected = res.connected() if leiden else None
        # collective: a write that fails on any rank raises on every rank
        name = res.write(args.output) if args.output else None
    except D.DistributedError as exc:
        _fail(comm, str(exc))
    names = gather(comm, name, 0, "the output file names")
    if comm.rank == 0:
        st = res.stats
        t = st.total
        print(f"graph        {what} on {comm.size} ranks (loaded in {t_load:.3f} s)")
        if leiden:
            print(
                f"algorithm    leiden, {args.metric}, resolution {args.resolution:g}, theta "
                f"{args.theta:g}, passes {args.passes or 'while they gain'}, seed {args.seed}; "
                f"{args.partition} partition"
            )
        else:
            print(
                f"algorithm    louvain, resolution {args.resolution:g}, threshold "
                f"{args.threshold:g}, seed {args.seed}; {args.partition} partition"
            )
        print(f"{'cpm' if cpm else 'modularity':<12} {q:.6f}")
        print(f"communities  {k:,}" + ("" if connected is None else f", connected: {connected}"))
        print(f"levels       {t['levels']} (sweeps {t['sweeps']}, rounds {t['rounds']})")
        for i, lv in enumerate(st.level_info, 1):
            value = lv["quality"] if "quality" in lv else lv["modularity"]
            print(
                f"  level {i}    {lv['vertices']:,} vertices, {'cpm' if cpm else 'modularity'} "
                f"{value:.6f}, {lv['moves']:,} moves in {lv['sweeps']} sweeps"
            )
        print("time         " + ", ".join(f"{k} {v:.3f} s" for k, v in st.time.items()))
        print(f"slowest rank {st.slowest_rank}")
        print(
            f"messages     ghost updates {t['ghost_updates']:,}, aggregation rows "
            f"{t['aggregation_rows']:,}, label queries {t['label_queries']:,}, "
            f"total {t['messages']:,} ({t['bytes']:,} bytes)"
        )
        if name:
            print(f"output       {len(names)} files (vertex, community): {names[0]} ...")
    return 0
