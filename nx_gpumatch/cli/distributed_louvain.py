"""``mpiexec -n P nx-gpumatch distributed louvain ...``: communities of a graph
spread over the ranks (the options are parsed and checked by
:mod:`nx_gpumatch.cli.distributed`). Rank 0 prints the modularity, the number of
communities, the levels, the time per phase and the messages."""

from nx_gpumatch.cli.distributed import _fail, load_timed


def run_louvain(args):
    from nx_gpumatch import distributed as D

    comm = D._comm.get_comm()
    try:
        part, what, t_load, owner = load_timed(args, comm)
        res = D.louvain_communities(
            part,
            resolution=args.resolution,
            threshold=args.threshold,
            max_level=args.max_level,
            seed=args.seed,
            owner=owner,
        )
        q = res.modularity()
        k = res.num_communities()
    except D.DistributedError as exc:
        _fail(comm, str(exc))
    if comm.rank == 0:
        st = res.stats
        t = st.total
        print(f"graph        {what} on {comm.size} ranks (loaded in {t_load:.3f} s)")
        print(
            f"algorithm    louvain, resolution {args.resolution:g}, threshold "
            f"{args.threshold:g}, seed {args.seed}; {args.partition} partition"
        )
        print(f"modularity   {q:.6f}")
        print(f"communities  {k:,}")
        print(f"levels       {t['levels']} (sweeps {t['sweeps']}, rounds {t['rounds']})")
        for i, lv in enumerate(st.level_info, 1):
            print(
                f"  level {i}    {lv['vertices']:,} vertices, modularity {lv['modularity']:.6f}, "
                f"{lv['moves']:,} moves in {lv['sweeps']} sweeps"
            )
        print("time         " + ", ".join(f"{k} {v:.3f} s" for k, v in st.time.items()))
        print(f"slowest rank {st.slowest_rank}")
        print(
            f"messages     ghost updates {t['ghost_updates']:,}, aggregation rows "
            f"{t['aggregation_rows']:,}, label queries {t['label_queries']:,}, "
            f"total {t['messages']:,} ({t['bytes']:,} bytes)"
        )
    return 0
