"""What to render and the build that renders it: the request (render.py's options and a manifest's
[[job]], one validator), the build of chapters on one executor, a batch of requests, and
render() for Python and Jupyter (api).
"""
