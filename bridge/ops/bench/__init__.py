"""``wavebridge bench``: latency, real-time slots and costs (``run``), the web side (``web``), and what both report alike (``common``)."""
