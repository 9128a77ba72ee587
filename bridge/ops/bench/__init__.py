"""``wavebridge bench``: latency, real-time slots and costs (``run``), and the web side (``web``)."""
