"""The DynamoDB store: client and identity, types, the PartiQL guard, bounded reads, paging,
TransactWriteItems commits and the demo tables."""
