"""Small helpers to try Ghostline on: put the cursor at the end of a line and wait for ghost text."""


def fibonacci(n):
    """Return the n-th Fibonacci number."""
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def is_prime(n):
    """Return True when n is a prime number."""
    if n < 2:
        return False


def main():
    for i in range(10):
        print(i, fibonacci(i), is_prime(i))


if __name__ == "__main__":
    main()
