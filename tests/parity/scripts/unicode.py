"""pdb parity: unicode."""
word = "naïve café ☃ 日本"
emoji = "🙂"
breakpoint()
joined = word + emoji
