"""Hand records (ddz_env.record): round trips, exact replays, clear errors for bad records."""
import json

import numpy as np
import pytest

from ddz_env import record
from ddz_env.actions import BID_3, DOUBLE
from ddz_env.game import Game
from ddz_env.rules import Rules
from ddz_env.record import RecordError


def _random_hand(i: int, legal_sets: list | None = None) -> Game:
    rng = np.random.default_rng(i)
    g = Game.deal(i, rules=Rules(bidding=i % 3 != 0, doubling=bool(i % 4)), landlord=(0 if i % 3 == 0 else None))
    while not g.is_over:
        legal = g.legal_actions()
        if legal_sets is not None:
            legal_sets.append(legal.tolist())
        g.step(int(rng.choice(legal)))
    return g


def test_replay_reproduces_scores_and_every_legal_set():
    seen = {"void": 0, "fixed": 0, "redoubled": 0, "bombs": 0}
    for i in range(300):
        legal = []
        g = _random_hand(i, legal)
        rec = json.loads(json.dumps(record.record_of(g, ["a", "b", "c"], {"i": i})))
        assert rec["format"] == "ddz-hand" and rec["version"] == record.VERSION
        assert len(rec["actions"]) == len(g.history)
        g2 = record.replay(rec)
        assert g2.scores.tolist() == g.scores.tolist() == rec["result"]["scores"]
        assert g2.history == g.history
        games = list(record.positions(rec))
        assert len(games) == len(g.history) + 1
        assert [x.legal_actions().tolist() for x in games[:-1]] == legal
        assert games[-1].is_over
        seen["void"] += g.void
        seen["fixed"] += rec["deal"]["landlord"] is not None
        seen["redoubled"] += bool(g.redoubled)
        seen["bombs"] += g.bombs + g.rockets > 0
    assert all(v > 0 for v in seen.values()), seen  # the sample covers each kind of hand


def test_result_breakdown_follows_R19():
    """The stored exponents give the stored scores: farmer i scores bid * s * 2**n_i (R19)."""
    for i in range(200):
        g = _random_hand(i)
        r = record.record_of(g)["result"]
        if r["void"]:
            assert r["scores"] == [0, 0, 0]
            continue
        sign = 1 if r["winner"] != r["landlord"] else -1
        farmers = [s for s in range(3) if s != r["landlord"]]
        for f in farmers:
            assert r["scores"][f] == r["bid"] * sign * 2 ** r["exponents"][f]
        assert sum(r["scores"]) == 0
        assert r["doubled"][r["landlord"]] is False


def test_save_load_roundtrip(tmp_path):
    g = _random_hand(5)
    rec = record.record_of(g, ["x", "y", "z"])
    p = tmp_path / "h.json"
    record.save(rec, p)
    assert record.load(p) == json.loads(json.dumps(rec))


def test_unfinished_hand_records_and_replays():
    g = Game.deal(3)
    g.step(BID_3)
    rec = record.record_of(g)
    assert rec["result"]["over"] is False
    g2 = record.replay(rec)
    assert g2.phase == g.phase and g2.current_player == g.current_player


@pytest.mark.parametrize("mutate, match", [
    (lambda r: r.update(format="other"), "not a hand record"),
    (lambda r: r.update(version=99), "version 99"),
    (lambda r: r.pop("actions"), "no 'actions'"),
    (lambda r: r["deal"].update(bottom="333"), "not a valid deal"),
    (lambda r: r["actions"].insert(0, {"seat": 0, "action": DOUBLE}), "does not replay"),
    (lambda r: r["actions"][0].update(seat=(r["actions"][0]["seat"] + 1) % 3), "out of turn"),
    (lambda r: r["result"].update(scores=[1, 2, -3]), "result 'scores'"),
    (lambda r: r["actions"].append("bid 3"), "not an object"),
])
def test_bad_records_are_refused_by_name(mutate, match):
    rec = record.record_of(_random_hand(1))
    mutate(rec)
    with pytest.raises(RecordError, match=match):
        record.replay(rec)
        list(record.positions(rec))


def test_load_refuses_non_records(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{not json")
    with pytest.raises(RecordError, match="not JSON"):
        record.load(p)
    p.write_text("[1, 2]")
    with pytest.raises(RecordError, match="JSON object"):
        record.load(p)


def test_save_writes_nothing_for_a_malformed_record(tmp_path):
    p = tmp_path / "bad.json"
    with pytest.raises(RecordError):
        record.save({"format": "ddz-hand"}, p)
    assert not p.exists()


def test_load_refuses_text_that_is_not_utf8_or_nested_too_deep(tmp_path):
    """Issue 22 (9): a non-UTF-8 file or JSON nested 100,000 deep is a RecordError, not
    UnicodeDecodeError / RecursionError, and the message names the file."""
    p = tmp_path / "x.json"
    for data, match in [(b'{"format": "ddz-hand", "players": ["\xff\xfe"]}', "not UTF-8"),
                        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
                        (b"[" * 40 + b"]" * 40, "nested 40 levels"),
                        (b'{"format": "ddz-hand", "version": 1, "meta": ' + b"[" * 40 + b"]" * 40 + b"}",
                         "nested 41 levels")]:
        p.write_bytes(data)
        with pytest.raises(RecordError, match=match) as e:
            record.load(p)
        assert str(p) in str(e.value)
        with pytest.raises(RecordError, match=match):
            record.parse(data)


def test_a_saved_record_with_deep_meta_still_loads(tmp_path):
    rec = record.record_of(_random_hand(2), meta={"a": {"b": [[1, 2], {"c": [3]}]}})
    record.save(rec, tmp_path / "h.json")
    assert record.load(tmp_path / "h.json")["meta"] == rec["meta"]


@pytest.mark.parametrize("result", ["over", 5, True, [1], ["over"]])
def test_a_result_of_the_wrong_type_is_refused(result):
    """Issue 22 (10): a result that is no object was a TypeError ("over", 5, true) or compared
    nothing ([1]); now RecordError from replay and positions alike."""
    rec = record.record_of(_random_hand(1))
    rec["result"] = result
    with pytest.raises(RecordError, match="'result' must be null or an object"):
        record.replay(rec)
    with pytest.raises(RecordError, match="'result' must be null or an object"):
        list(record.positions(rec))
    rec["result"] = None  # no result: nothing to compare
    assert record.replay(rec).is_over


@pytest.mark.parametrize("players", [["a", "b"], ["a", "b", 3], "abc", {"0": "a"}, ["a", None, "c"]])
def test_players_must_be_three_names(players):
    rec = record.record_of(_random_hand(1))
    rec["players"] = players
    with pytest.raises(RecordError, match="'players' must be null or a list of 3 names"):
        list(record.positions(rec))


def _failing_open(real_open, after: int):
    """``open`` whose files, opened for writing, take ``after`` characters and then fail as a full disk."""
    import errno

    def fake(path, mode="r", *args, **kwargs):
        f = real_open(path, mode, *args, **kwargs)
        if "w" not in mode:
            return f
        write = f.write

        def limited(text):
            write(text[:after])
            raise OSError(errno.ENOSPC, "No space left on device")
        f.write = limited
        return f
    return fake


def test_save_is_whole_or_nothing_on_a_full_disk(tmp_path, monkeypatch):
    """A write that fails half way (a full disk) leaves the previous record as it was and no
    temporary file; before, records were written in place and left truncated."""
    import builtins

    from ddz_env import files

    p = tmp_path / "h.json"
    first = record.record_of(_random_hand(1))
    record.save(first, p)
    before = p.read_bytes()
    monkeypatch.setattr(files, "open", _failing_open(builtins.open, 100), raising=False)
    monkeypatch.setattr(record, "open", _failing_open(builtins.open, 100), raising=False)
    with pytest.raises(OSError, match="No space left"):
        record.save(record.record_of(_random_hand(2)), p)
    assert p.read_bytes() == before
    with pytest.raises(OSError):
        record.save(first, tmp_path / "new.json")
    assert sorted(x.name for x in tmp_path.iterdir()) == ["h.json"]  # no partial file, no temporary one


def test_save_replaces_a_record_whole(tmp_path):
    p = tmp_path / "h.json"
    record.save(record.record_of(_random_hand(1)), p)
    rec = record.record_of(_random_hand(2))
    record.save(rec, p)
    assert record.load(p) == json.loads(json.dumps(rec))
    assert [x.name for x in tmp_path.iterdir()] == ["h.json"]
