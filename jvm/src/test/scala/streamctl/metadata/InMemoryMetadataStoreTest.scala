package streamctl.metadata

class InMemoryMetadataStoreTest extends MetadataStoreContract {
  override protected val store: MetadataStore = new InMemoryMetadataStore
}
