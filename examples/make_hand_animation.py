"""A hand of Dou Dizhu as an animated GIF or WebP: the table drawn as the web page draws it, a frame a move.

    pip install -e ".[render]"          # Pillow
    python examples/make_hand_animation.py [--out docs/images/hand.webp] [--seed 7] [--agents rule,rule,rule]

The PettingZoo env renders rgb_array pictures (ddz_env.env(render_mode="rgb_array"): an (H, W, 3) uint8 array
a call); ddz_env.render.record_hand plays a hand and writes one frame after the deal and after each move with
Pillow alone (no video codec), each shown 1 / --fps seconds and the last --hold seconds. The seats are played
by --agents (agents.load specs, one for all or one per seat); docs/images/hand.webp in the docs is this
command with its defaults. A .webp (each frame lossless or lossy, --quality, whichever is smaller) is a few
hundred KB; a .gif (255 colours) about twice that; --scale shrinks the frames (0.5: 480 x 320) for a smaller file.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None) -> str:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=os.path.join("docs", "images", "hand.webp"), help="a .webp or a .gif")
    p.add_argument("--seed", type=int, default=7, help="the deal (and the first bidder)")
    p.add_argument("--agents", default="rule", help="agents.load spec(s), comma-separated: one for every seat or three")
    p.add_argument("--fps", type=float, default=1.5, help="frames a second")
    p.add_argument("--hold", type=float, default=4.0, help="seconds the last frame stays")
    p.add_argument("--quality", type=int, default=55, help="a WebP's quality, 0-100")
    p.add_argument("--scale", type=float, default=1.0, help="frame size as a fraction of 960 x 640")
    args = p.parse_args(argv)

    import numpy as np

    import agents
    import ddz_env
    from ddz_env.env import AGENTS
    from ddz_env.render import record_hand, save_animation

    specs = args.agents.split(",")
    if len(specs) not in (1, len(AGENTS)):
        p.error(f"--agents: one spec or {len(AGENTS)}, got {len(specs)}")
    seats = {a: agents.load(specs[i % len(specs)]) for i, a in enumerate(AGENTS)}
    env = ddz_env.env(render_mode="rgb_array")
    frames = record_hand(env, args.out, policy=lambda obs, agent: seats[agent].act(obs), seed=args.seed,
                         fps=args.fps, hold_last=args.hold, quality=args.quality)
    if args.scale != 1.0:
        from PIL import Image

        h, w = frames[0].shape[:2]
        size = (round(w * args.scale), round(h * args.scale))
        frames = [np.asarray(Image.fromarray(f).resize(size, Image.LANCZOS)) for f in frames]
        save_animation(frames, args.out, fps=args.fps, hold_last=args.hold, quality=args.quality)
    g = env.unwrapped.game
    print(f"{args.out}: {len(frames)} frames, {os.path.getsize(args.out) / 1024:.0f} KiB; "
          f"{'void hand' if g.void else f'seat {g.winner} went out, scores {g.scores.tolist()}'}")
    return args.out


if __name__ == "__main__":
    main()
