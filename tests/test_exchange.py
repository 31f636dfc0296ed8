"""campaign.exchange: bulk bytes through shared memory between the campaign's process and the
harness's worker processes, against the objects themselves."""

from __future__ import annotations

import multiprocessing
import os

import numpy as np

from campaign import exchange
from campaign.exchange import Block, Blocks


def _put_there(path: str, q) -> None:
    q.put(exchange.put({"a": np.arange(1000, dtype=np.uint64), "n": 7}, path))


def test_an_objects_arrays_cross_out_of_band_and_come_back_equal_and_writable():
    obj = {"big": np.arange(100_000, dtype=np.uint64), "strided": np.arange(12).reshape(3, 4)[:, 1],
           "empty": np.zeros(0, np.int16), "rest": (np.ones(5, bool), "text", 3)}
    block = Block(0)  # grows as it is written
    packed = exchange.put(obj, block.path)
    assert len(packed.pickle) < 1000 and packed.spans[0] == (0, 800_000)  # the big array is not in the pickle
    assert all(o % exchange.ALIGN == 0 for o, _ in packed.spans)
    got = exchange.take(packed, block.path)
    block.close()  # the arrays stay readable: a mapping of their own
    for key in ("big", "strided", "empty"):
        assert got[key].dtype == obj[key].dtype and np.array_equal(got[key], obj[key])
    assert np.array_equal(got["rest"][0], obj["rest"][0]) and got["rest"][1:] == ("text", 3)
    got["big"][0] = 99  # a private copy on write: the block is not changed
    assert got["big"][0] == 99


def test_another_process_writes_into_a_block_by_its_path():
    block = Block(0)
    context = multiprocessing.get_context("forkserver")
    q = context.Queue()
    p = context.Process(target=_put_there, args=(block.path, q))
    p.start()
    packed = q.get(timeout=60)
    p.join(60)
    got = exchange.take(packed, block.path)
    assert np.array_equal(got["a"], np.arange(1000, dtype=np.uint64)) and got["n"] == 7
    block.close()
    assert not os.path.exists(block.path)


def test_blocks_are_used_again_smallest_first_and_no_more_kept_than_room(monkeypatch):
    monkeypatch.setattr(Blocks, "KEEP", 4)
    blocks = Blocks()
    big, small = blocks.take(1 << 20), blocks.take(1 << 12)
    big.write(b"left")
    big.hold(2)
    big.release()
    small.close()
    assert blocks.take(100) is small  # the smallest idle one that fits, its size the one asked
    assert small.size == 100 and small.capacity == 1 << 12
    other = blocks.take(100)
    assert other is not big  # still held by a reader: a new block
    big.release()
    other.close()
    small.close()
    again = blocks.take(1 << 16)
    assert again is big and again.read()[:4] == b"left"  # its bytes as its last user left them
    again.close()
    again.close()  # a second close of one use does not put it back twice
    taken = [blocks.take(1 << 20), blocks.take(1 << 20)]
    assert taken[0] is big and taken[1] is not big
    for block in taken:
        block.close()
    kept = [other, small, big, taken[1]]  # Blocks.KEEP of them
    extra = blocks.take(1 << 21)  # none idle fits: new
    extra.close()  # no room: freed
    assert extra._fd < 0 and all(b._fd >= 0 for b in kept)
    blocks.close()
    assert all(b._fd < 0 for b in kept)  # the idle ones freed with the lane
    late = blocks.take(64)
    late.close()  # taken after: freed when closed
    assert late._fd < 0
