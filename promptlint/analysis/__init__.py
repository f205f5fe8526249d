"""What analyzers stand on and what a template run is: the kernel (Context, the one finding factory), TemplateRun, and a run's eligible blocks per request."""
