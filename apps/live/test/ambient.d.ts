// The shared harness's injected values are declared beside the server's global setup.
