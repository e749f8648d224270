"""Root conftest: its presence makes pytest put this directory on sys.path so `import procsim` works."""
