"""wavebridge on more than one machine: the engine as a Ray Serve deployment (:mod:`.replica`) and
``wavebridge cluster up|status|down`` for one machine (:mod:`.cli`). Imports Ray only when used."""
