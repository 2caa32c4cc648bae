"""gunicorn's worker for the app: uvicorn's (``uvicorn_worker``) on asyncio and httptools, with the
lifespan on (each worker warms up before ``/ready`` says 200)."""
from uvicorn_worker import UvicornWorker


class ServeWorker(UvicornWorker):
    CONFIG_KWARGS = {"loop": "asyncio", "http": "httptools", "lifespan": "on", "server_header": False}
