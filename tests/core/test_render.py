"""Pictures of the table (``render_mode="rgb_array"``, ``ddz_env.render``): an (H, W, 3) uint8 array in every
phase, the same pixels for the same state, the cards of the view drawn where their seat sits, a move that
changes the picture; animations of a hand (Pillow's GIF / WebP, PettingZoo's RecordVideo); the text modes
as before; without Pillow, one error naming the extra and a package that imports and plays."""
from __future__ import annotations

import copy
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

import ddz_env
from ddz_env import raw_env
from ddz_env.view import seat_view

from aec import R19_DEAL, a  # tests/helpers/aec.py
from common import ROOT

pytestmark = pytest.mark.usefixtures("quiet_warnings")  # (tests/conftest.py)

render = pytest.importorskip("ddz_env.render")
PIL = pytest.importorskip("PIL")  # (the 'render' extra)
W, H = render.SIZE

# the R19 hand (tests/helpers/aec.py) through every phase: bidding, doubling, redoubling, the play, over
R19_MOVES = ["bid 3", "double", "no double", "redouble", "3", "pass", "8", "A", "2222", "pass", "pass",
             "BR", "pass", "pass", "3456789TJQK"]


def _frames(e) -> dict[str, np.ndarray]:
    """The R19 hand played in ``e``: a picture of each phase (its first position) and of the end."""
    e.reset(options={"deal": R19_DEAL})
    seen = {e.unwrapped.game.phase.name: e.render()}
    for x in R19_MOVES:
        e.step(a(x))
        seen.setdefault(e.unwrapped.game.phase.name, e.render())
    return seen


def test_metadata_lists_rgb_array():
    for e in (raw_env(), ddz_env.env()):
        assert "rgb_array" in e.metadata["render_modes"]
    assert raw_env(render_mode="rgb_array").render_mode == "rgb_array"


def test_rgb_array_in_every_phase():
    assert raw_env(render_mode="rgb_array").render().shape == (H, W, 3)  # (before reset: the empty table)
    e = ddz_env.env(render_mode="rgb_array")
    frames = _frames(e)
    assert list(frames) == ["BID", "DOUBLE", "REDOUBLE", "PLAY", "OVER"]
    for phase, f in frames.items():
        assert isinstance(f, np.ndarray) and f.shape == (H, W, 3) and f.dtype == np.uint8, phase
        assert f.std() > 10, phase  # a picture, not a blank
    pictures = list(frames.values())
    assert all(not np.array_equal(p, q) for p, q in zip(pictures, pictures[1:]))
    e.reset(options={"deal": R19_DEAL})  # a void hand (R4: everyone passed) is over too
    for _ in range(3):
        e.step(a("bid pass"))
    assert e.unwrapped.game.void
    void = e.render()
    assert void.shape == (H, W, 3) and not np.array_equal(void, frames["OVER"]) and not np.array_equal(void, frames["BID"])


def test_pettingzoo_render_test_passes_every_mode(capsys):
    from pettingzoo.test import render_test

    for make in (raw_env, ddz_env.env):
        render_test(make)  # (each mode of metadata: rgb_array an (H, W, 3) uint8 array, ansi a str, human None)
    assert "seat 0" in capsys.readouterr().out  # (what human printed)


def test_same_state_same_pixels_and_a_move_changes_them():
    e1, e2 = raw_env(render_mode="rgb_array"), raw_env(render_mode="rgb_array")
    for e in (e1, e2):
        e.reset(options={"deal": R19_DEAL})
    first = e1.render()
    assert np.array_equal(first, e1.render()) and np.array_equal(first, e2.render())
    e1.step(a("bid 3"))
    after = e1.render()
    assert not np.array_equal(first, after)
    e2.step(a("bid 3"))
    assert np.array_equal(after, e2.render())


def _differs(x: np.ndarray, y: np.ndarray) -> tuple[slice, slice]:
    """The rows and columns where two pictures differ (their bounding box)."""
    rows, cols = np.nonzero((x != y).any(axis=2))
    assert rows.size, "the pictures are the same"
    return slice(rows.min(), rows.max() + 1), slice(cols.min(), cols.max() + 1)


def test_the_cards_drawn_are_the_views_hands_where_their_seats_sit():
    e = raw_env()
    e.reset(options={"deal": R19_DEAL})
    view = seat_view(e.game, None)
    base = render.table_array(view)
    # another hand for one seat changes the picture only in that seat's place: seat 0 at the bottom,
    # seat 1 (next) top right, seat 2 top left; the bottom cards in the middle
    for s, where in ((0, lambda r, c: r.start > H * 0.7),
                     (1, lambda r, c: r.stop < H * 0.4 and c.start > W / 2),
                     (2, lambda r, c: r.stop < H * 0.4 and c.stop < W / 2)):
        other = copy.deepcopy(view)
        other["hands"][s] = "3456789TJQKA2BR"
        rows, cols = _differs(base, render.table_array(other))
        assert where(rows, cols), (s, rows, cols)
    other = copy.deepcopy(view)
    other["bottom"] = "BR2"
    rows, cols = _differs(base, render.table_array(other))
    assert H * 0.35 < rows.start and rows.stop < H * 0.6
    # the seat at the bottom is whichever ``me`` says: seat 1's hand then changes the bottom of the picture
    other = copy.deepcopy(view)
    other["hands"][1] = "3456789TJQKA2BR"
    rows, _ = _differs(render.table_array(view, me=1), render.table_array(other, me=1))
    assert rows.start > H * 0.7


def test_a_different_deal_draws_different_cards():
    swapped = {**R19_DEAL, "hands": [R19_DEAL["hands"][1], R19_DEAL["hands"][0], R19_DEAL["hands"][2]]}
    pictures = []
    for deal in (R19_DEAL, swapped):
        e = raw_env(render_mode="rgb_array")
        e.reset(options={"deal": deal})
        pictures.append(e.render())
    assert not np.array_equal(*pictures)


def _red(picture: np.ndarray) -> int:
    """How many pixels are the cards' red (#c0262d) or close to it."""
    return int((np.abs(picture.astype(int) - (0xC0, 0x26, 0x2D)).sum(axis=2) < 40).sum())


def test_suits_as_the_page_draws_them():
    # the n-th card of a rank has the page's n-th suit (spade, heart, club, diamond): one 3 is black, the second
    # red; the red joker is red, the black one not
    e = raw_env()
    e.reset(options={"deal": R19_DEAL})
    view = seat_view(e.game, None)
    bottom = slice(int(H * 0.75), H)
    red = {}
    for hand in ("3", "33", "B", "R"):
        v = copy.deepcopy(view)
        v["hands"][0] = hand
        red[hand] = _red(render.table_array(v)[bottom])
    assert red["3"] == red["B"] == 0 and red["33"] > 20 and red["R"] > 20


def test_text_modes_as_before():
    e = raw_env(render_mode="ansi")
    e.reset(options={"deal": R19_DEAL})
    text = e.render()
    assert isinstance(text, str) and all(f"seat {s}" in text for s in range(3))
    e = raw_env(render_mode="rgb_array")
    assert e.render().shape == (H, W, 3)  # no hand yet: the empty table, as ansi's "(no hand: call reset())"
    with pytest.raises(ValueError, match="'rgb'"):
        raw_env(render_mode="rgb")


def test_record_hand_writes_an_animation(tmp_path):
    from PIL import Image, features

    e = ddz_env.env(render_mode="rgb_array")
    moves = iter(R19_MOVES)
    frames = render.record_hand(e, tmp_path / "hand.gif", policy=lambda obs, agent: a(next(moves)),
                                options={"deal": R19_DEAL})
    assert e.unwrapped.game.is_over and len(e.unwrapped.game.history) == len(R19_MOVES)
    assert len(frames) == len(R19_MOVES) + 1 and all(f.shape == (H, W, 3) for f in frames)
    with Image.open(tmp_path / "hand.gif") as im:
        assert im.n_frames == len(frames) and im.size == (W, H)
        im.seek(len(frames) - 1)
        assert np.array_equal(np.asarray(im.convert("RGB"))[0, 0], frames[-1][0, 0])
    if features.check("webp"):
        render.save_animation(frames[:3], tmp_path / "hand.webp")
        with Image.open(tmp_path / "hand.webp") as im:
            assert im.n_frames == 3
    with pytest.raises(ValueError, match="rgb_array"):
        render.record_hand(ddz_env.env(render_mode="ansi"), tmp_path / "x.gif")
    with pytest.raises(ValueError, match=".gif or a .webp"):
        render.save_animation(frames, tmp_path / "hand.mp4")


def test_pettingzoo_record_video_takes_the_frames(tmp_path, monkeypatch):
    # PettingZoo's RecordVideo writes MP4 through MoviePy (not a dependency here): a stand-in takes its frames
    from pettingzoo.utils.wrappers import RecordVideo

    clips = []

    class ImageSequenceClip:
        def __init__(self, frames, fps):
            self.frames, self.fps = list(frames), fps
            clips.append(self)

        def write_videofile(self, path, logger=None):
            self.path = path

    for name in ("moviepy", "moviepy.video", "moviepy.video.io", "moviepy.video.io.ImageSequenceClip"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    sys.modules["moviepy.video.io.ImageSequenceClip"].ImageSequenceClip = ImageSequenceClip
    e = RecordVideo(ddz_env.env(render_mode="rgb_array"), str(tmp_path), episode_trigger=lambda k: True)
    e.reset(options={"deal": R19_DEAL})
    for x in R19_MOVES:
        e.step(a(x))
    e.close()
    assert len(clips) == 1 and len(clips[0].frames) == len(R19_MOVES) + 1 and clips[0].fps == 1
    assert all(f.shape == (H, W, 3) and f.dtype == np.uint8 for f in clips[0].frames)


def test_seat_env_renders_its_learning_seat_at_the_bottom():
    from agents.integrations.seat_env import DouDizhuSeatEnv

    env = DouDizhuSeatEnv(seat=2, render_mode="rgb_array")
    env.reset(seed=0)
    f = env.render()
    assert f.shape == (H, W, 3) and f.dtype == np.uint8
    view = seat_view(env.aec.game, None, ["opponent", "opponent", "learning seat"])
    assert np.array_equal(f, render.table_array(view, me=2))


# inserted first in sys.meta_path: Pillow missing (importing PIL fails as a missing package does)
NO_PILLOW = textwrap.dedent(f"""
    import sys

    class _Missing:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "PIL":
                raise ModuleNotFoundError(f"No module named {{name!r}}", name="PIL")
            return None

    sys.meta_path.insert(0, _Missing())
    sys.path.insert(0, {str(ROOT)!r})
""")


def test_without_pillow_one_error_naming_the_extra_and_the_rest_works():
    code = NO_PILLOW + textwrap.dedent("""
        import ddz_env
        from ddz_env import render
        e = ddz_env.env(render_mode="ansi")
        e.reset(seed=0)
        assert "seat 0" in e.render()
        for make in (lambda: ddz_env.env(render_mode="rgb_array"), lambda: render.table_array(None)):
            try:
                make()
            except ImportError as err:
                print("ERROR:", err)
        print("loaded", "PIL" in sys.modules)
    """)
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    errors = [line for line in p.stdout.splitlines() if line.startswith("ERROR:")]
    assert len(errors) == 2 and all('pip install -e ".[render]"' in x and "Pillow" in x for x in errors), p.stdout
    assert "loaded False" in p.stdout


def test_importing_ddz_env_imports_no_pillow():
    code = "import sys, ddz_env, ddz_env.render, ddz_env.env; print(sorted(m for m in sys.modules if m.startswith('PIL')))"
    p = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r}); " + code], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.strip() == "[]", p.stdout + p.stderr


def test_without_dejavu_the_font_pillow_bundles(monkeypatch):
    from PIL import ImageFont

    e = raw_env(render_mode="rgb_array")
    e.reset(options={"deal": R19_DEAL})
    with_dejavu = e.render()

    truetype = ImageFont.truetype

    def no_file(font, *args, **kwargs):  # a font file by name is not found; Pillow's own (bytes) still loads
        if isinstance(font, str):
            raise OSError("cannot open resource")
        return truetype(font, *args, **kwargs)

    caches = (render._font, render._card)
    monkeypatch.setattr(ImageFont, "truetype", no_file)
    try:
        for c in caches:
            c.cache_clear()
        bundled = e.render()
        assert bundled.shape == (H, W, 3) and bundled.dtype == np.uint8 and bundled.std() > 10
        assert np.array_equal(bundled, e.render())
    finally:
        monkeypatch.undo()
        for c in caches:
            c.cache_clear()
    assert np.array_equal(with_dejavu, e.render())
