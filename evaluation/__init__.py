"""Measuring detection quality: edited and natural near-duplicates of real news, in English
and Chinese, this project's detector beside its peers (`python -m evaluation`)."""
