"""Two short programs that give an agent of your own this project's governed memory."""
