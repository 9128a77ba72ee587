# wavebridge — two commands on a fresh machine: `make demo` and `make test`.
PY      := .venv/bin/python
STAMP   := .venv/.setup-done

.PHONY: setup demo test plugin bench clean serve mutate

setup: $(STAMP)

$(STAMP): pyproject.toml scripts/setup
	bash scripts/setup
	touch $(STAMP)

plugin: setup
	$(MAKE) -C plugin_stub/lv2 BUILD=$(CURDIR)/build/lv2

demo: setup
	$(PY) -m bridge demo --wav demo.wav

test: setup plugin
	bash scripts/run-tests

# mutation testing of the core modules against their fast tests (minutes; not part of test):
# scores per module, equivalent mutants and the must-kill list in docs/TESTING.md
mutate: setup
	$(PY) scripts/mutate $(MUTATE_ARGS)

bench: setup
	$(PY) -m bridge bench

serve: setup
	$(PY) -m bridge serve

clean:
	rm -rf build .pytest_cache .hypothesis demo.wav
