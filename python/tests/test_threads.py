"""The GIL is released while the engine steps: simulations in two Python threads run at the
same time and give the results of running them one after the other."""

import sys
import threading

import numpy as np

import sprung


def run_to(sim, t):
    sim.advance_to(t)
    return sim.channel_values()


def test_two_threads_equal_sequential(double_wishbone):
    t_end = 1.0
    seq = [run_to(sprung.Simulation(double_wishbone, step=s), t_end) for s in (1e-3, 5e-4)]
    sims = [sprung.Simulation(double_wishbone, step=s) for s in (1e-3, 5e-4)]
    out = [None, None]

    def work(i):
        out[i] = run_to(sims[i], t_end)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for a, b in zip(seq, out):
        np.testing.assert_array_equal(a, b)


def test_python_runs_while_the_engine_steps(double_wishbone):
    """While a worker thread is inside advance_to, the main thread keeps executing Python
    bytecode (a counter moves). Were the GIL held through the call, no bytecode of another thread
    could run between the worker's two reads of the counter (a thread inside native code holding
    the GIL is never preempted), in none of the five calls. Released, the main thread takes the
    GIL as soon as the worker enters the engine; each call is only ~0.5 s of simulated time
    (tens of ms), so on a loaded machine the main thread may not be scheduled within every one:
    the test asks for progress during at least one call."""
    sim = sprung.Simulation(double_wishbone)
    counter = [0]
    seen = {}
    done = threading.Event()

    def worker():
        for t in (0.5, 1.0, 1.5, 2.0, 2.5):
            c0 = counter[0]
            sim.advance_to(t)
            seen[t] = counter[0] - c0
        done.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(0.1)  # the main thread gets the GIL only when it is released
    try:
        th = threading.Thread(target=worker)
        th.start()
        while not done.is_set():
            counter[0] += 1
        th.join()
    finally:
        sys.setswitchinterval(old)
    assert len(seen) == 5 and sum(seen.values()) > 0, seen
