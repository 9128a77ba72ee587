"""Operating the daemon: the ``wavebridge`` CLI, configuration, systemd, metrics, demo, render, bench."""
