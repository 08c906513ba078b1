def add(a, b):
    return a + b


def fibonacci(n):
