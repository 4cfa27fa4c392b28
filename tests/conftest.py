pytest_plugins = ["tests.support.plugin"]
