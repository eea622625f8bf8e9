"""Pipeline-parallel scheduling: action IR, schedules, lowering, simulation (no grpc, no torch)."""
